#pragma once
// `kfoundry optimize`: the MAP-Elites search over kernels for a task on one or more devices,
// recorded in a store so a killed run resumes; then the top candidates are re-verified on fresh
// inputs on one device, re-timed interleaved with the baseline, and the best kernel is written to
// a file. What is printed is read back from the store.

#include <string>

#include "eval/supervisor.hpp"

namespace kf {

struct OptimizeArgs {
  std::string task, device, sizes, proposer = "builtin", proposer_cmd, store = "sqlite:kfoundry.db";
  std::string run, resume, selection = "uniform", strategy,
                           out_dir;  // out: "" = the run's, else kfoundry-out
  std::string rules_dir;
  std::string task_dir;  // the task's folder, stored with the run so a resume finds it
  int budget = 60, tune_budget = 4, top = 3, repeats = 3, in_flight = 1, build_jobs = 0;
  double seconds = 0, proposer_timeout_s = 300;
  unsigned long long seed = 1;
  bool json = false, no_rules = false, resume_flag = false;
  // --proposer llm (docs/llm.md). The API key is never stored with the run's settings.
  std::string llm_base_url, llm_model, llm_api_key, llm_models_file, llm_reply = "file",
                                                                     prompts_dir;
  double llm_temperature = -2, llm_timeout_s = 300, llm_tokens_per_minute = 0, max_cost = 0;
  int llm_max_tokens = 0, llm_retries = 4, llm_concurrency = 0, meta_every = 8, meta_min_uses = 3;
  bool no_meta = false;
  ExecutorOptions executor;
  // How candidates of the search are judged (the final re-verification is always thorough).
  EvalSettings settings = EvalSettings::Fast();
};

int RunOptimize(OptimizeArgs args, const std::string& self);

}  // namespace kf
