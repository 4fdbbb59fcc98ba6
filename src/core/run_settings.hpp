#pragma once
// A run's settings as one value: what `kfoundry optimize` was asked, made of each layer's own
// settings (the search's policy, the proposer's, how candidates are judged, the final
// re-verification), stored with the run, read back when it resumes, and shipped to workers. One
// codec (RunSettingsToJson / RunSettingsFromJson); the stored object keeps the keys runs have
// always been stored with, so a run stored before this value existed resumes with its settings.
// Secrets are never part of it: an API key stays with the process (or worker) that holds it.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/candidate.hpp"

namespace kf {

// The search's policy: how much to spend and how to choose (search/search_loop.hpp).
struct SearchPolicy {
  int budget = 60;      // evaluations of the run (the baseline's included; a resumed run's too)
  double seconds = 0;   // wall-clock limit of one invocation; 0 = none
  int tune_budget = 4;  // evaluations per proposal
  int in_flight = 1;    // proposals out at once
  uint64_t seed = 1;
  std::string selection = "uniform";  // parent selection (search/archive.hpp's names)
  std::string strategy;               // tuning strategy ("" = the default)
  int inspirations = 2;               // elites of other cells shown with each parent
  int max_empty_proposals = 25;       // proposals in a row that gave nothing, before stopping
  bool use_rules = true;              // apply the hardware rules when tuning
  std::string rules_dir;              // "" = the bundled rules
};

// A chat model's settings (docs/llm.md), less its API key.
struct LlmSettings {
  std::string base_url, model, models_file, prompts_dir;
  std::string reply = "file";  // "file" | "diff"
  double temperature = -2;     // below 0: the model's default
  double timeout_s = 300, tokens_per_minute = 0, max_cost = 0;
  int max_tokens = 0, retries = 4, concurrency = 0;  // concurrency 0: the run's in_flight
  bool meta = true;
  int meta_every = 8, meta_min_uses = 3;
};

// Where new kernels come from (propose/).
struct ProposerSettings {
  std::string kind = "builtin";  // "builtin" | "command" | "llm"
  std::string command;           // kind "command": the program and its arguments
  double timeout_s = 300;        // kind "command": seconds one proposal may take
  LlmSettings llm;               // kind "llm"
};

// The end of a run: the top elites re-verified on fresh inputs, each this many times.
struct FinalSettings {
  int top = 3, repeats = 3;
};

struct RunSettings {
  std::string task_dir;      // the task's folder: a resumed run finds it there
  std::string task_variant;  // and the variant of it the run judges ("" none: Task::variant)
  std::string out_dir;       // where the best kernel is written ("" = kfoundry-out)
  std::string device;        // the device selectors ("" = the default device)
  std::string sizes;         // the benchmark size set ("" = the task's)
  SearchPolicy search;
  ProposerSettings proposer;
  EvalSettings judging = EvalSettings::Fast();  // how the search's candidates are judged
  FinalSettings final;
};

nlohmann::json RunSettingsToJson(const RunSettings& s);
// Fields the object lacks keep their defaults. Throws nlohmann::json::exception on a field of
// the wrong type.
RunSettings RunSettingsFromJson(const nlohmann::json& j);

}  // namespace kf
