#pragma once
// Where the LLM proposer's models come from: the command line, the environment, or a models file
// for an ensemble. Anything missing or wrong is an InputError naming the flag, the environment
// variable or file:line:field, before any request is made.
//
// One model: the first of --llm-model / KFOUNDRY_LLM_MODEL; its server the first of
// --llm-base-url / KFOUNDRY_LLM_BASE_URL / OPENAI_BASE_URL / "https://api.openai.com/v1" (the last
// only when OPENAI_API_KEY is set); its key the first of --llm-api-key / KFOUNDRY_LLM_API_KEY /
// OPENAI_API_KEY, or none (local servers need none). An empty variable counts as unset.
//
// An ensemble: --llm-models FILE (not with --llm-model), a TOML file of [[model]] tables:
//   [[model]]
//   name = "coder"                         # optional label ("" -> the model id)
//   model = "qwen2.5-coder-32b"            # required
//   base_url = "http://127.0.0.1:8000/v1"  # optional: else the flag / environment above
//   api_key_env = "MY_KEY"                 # optional: the key is read from this variable
//   weight = 2.0                           # prior weight in the ensemble (> 0, default 1)
//   temperature = 0.6                      # 0..2; negative: not sent (default 0.7 or the flag)
//   max_tokens = 8192                      # default 4096 or the flag
//   max_completion_tokens = 16000          # reasoning models: sent instead of max_tokens
//   reasoning_effort = "high"              # optional, sent as is
//   price_in = 0.5                         # USD per million prompt tokens (default 0)
//   price_out = 1.5                        # USD per million completion tokens (default 0)
//   context_tokens = 32768                 # the context window (default 32768)
// A key is never written in the file: a field named api_key is an error, as is any unknown
// field (a typo must not pass silently), and two models with the same label. A model without
// api_key_env gets the key of the flag / environment only when it goes to the same base URL, so
// that the key of one provider is never sent to another.

#include <string>
#include <vector>

#include "propose/llm/chat_client.hpp"

namespace kf {

struct LlmFlags {
  std::string base_url, model, api_key, models_file;
  double temperature = -2;  // -2: not given
  int max_tokens = 0;       // 0: not given
};

std::vector<ModelSettings> ResolveModels(const LlmFlags& flags);

// The models of a models file; `defaults` gives what a model does not say (base URL, key,
// temperature, max tokens).
std::vector<ModelSettings> LoadModelsFile(const std::string& path, const ModelSettings& defaults);

}  // namespace kf
