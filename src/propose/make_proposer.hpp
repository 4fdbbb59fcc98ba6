#pragma once
// One place that turns a run's proposer settings into a proposer: builtin (the task's templates
// and source mutations), command (an executable speaking JSON) or llm (a chat-completions model
// with the prompt library). What a proposer needs from outside its layer comes in as values and
// interfaces: the classifier's prediction for builtin, the prompt journal and the API key for llm.

#include <memory>
#include <string>
#include <vector>

#include "core/run_settings.hpp"
#include "core/task.hpp"
#include "prompt/journal.hpp"
#include "propose/builtin/builtin_proposer.hpp"
#include "propose/effects.hpp"
#include "propose/proposer.hpp"

namespace kf {

struct ProposerContext {
  Language language = Language::kOpenCL;   // the devices' kernel language
  BuiltinProposer::CellPredictor predict;  // builtin: where a kernel's child would land
  PromptJournal* journal = nullptr;        // llm: keeps prompt component versions (not owned)
  std::string api_key;                     // llm: from the flag; the environment's otherwise
  int in_flight = 1;                       // llm: its concurrency when the settings give none
  // Where the side effects happen (not owned): null, in this process; else on propose workers.
  ChatService* chat = nullptr;
  CommandService* commands = nullptr;
};

struct MadeProposer {
  std::unique_ptr<Proposer> proposer;
  std::string description;  // for the run's start line: "2 models (coder, small) at http://..."
};

// Throws InputError for settings no proposer can be made from (what CheckProposerSettings
// finds), and for models that cannot be resolved.
MadeProposer MakeProposer(const ProposerSettings& settings, const Task& task,
                          const ProposerContext& context);

// Throws InputError for settings no proposer can be made from (an unknown kind, a command kind
// without its command, an unknown reply format): cheap, before any device is started.
void CheckProposerSettings(const ProposerSettings& settings);

// The kinds MakeProposer knows, for messages and --help.
const std::vector<std::string>& ProposerKinds();

}  // namespace kf
