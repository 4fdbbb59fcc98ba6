#pragma once
// `kfoundry optimize`: the MAP-Elites search over kernels for a task on one or more devices,
// recorded in a store so a killed run resumes; then the top candidates are re-verified on fresh
// inputs on one device, re-timed interleaved with the baseline, and the best kernel is written to
// a file. What is printed is read back from the store.

#include <string>

#include "core/run_settings.hpp"
#include "host/supervisor.hpp"

namespace kf {

struct OptimizeArgs {
  std::string task;  // a task folder or a bundled task's name
  std::string store = "sqlite:kfoundry.db", run, resume;
  bool json = false, resume_flag = false;
  RunSettings settings;  // stored with the run; a resumed run goes on with its stored ones
  // This process's own, never stored: the model's API key (docs/llm.md), the builder pool's
  // size and the executors' limits.
  std::string llm_api_key;
  int build_jobs = 0;
  ExecutorOptions executor;
};

int RunOptimize(OptimizeArgs args, const std::string& self);

}  // namespace kf
