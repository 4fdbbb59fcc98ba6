#pragma once
// `kfoundry optimize`: the MAP-Elites search over kernels for a task on a device, recorded in a
// store so a killed run resumes; then the top candidates are re-verified on fresh inputs and
// re-timed interleaved with the baseline, and the best kernel is written to a file.

#include <string>

#include "eval/executor.hpp"

namespace kf {

struct OptimizeArgs {
  std::string task, device, sizes, proposer = "builtin", store = "sqlite:kfoundry.db";
  std::string run, resume, selection = "uniform", strategy, out_dir = "kfoundry-out";
  std::string rules_dir, compile_ahead = "auto";
  int budget = 60, tune_budget = 4, top = 3, repeats = 3;
  double seconds = 0;
  unsigned long long seed = 1;
  bool json = false, no_rules = false, resume_flag = false;
  ExecutorOptions executor;
};

int RunOptimize(OptimizeArgs args, const std::string& self);

}  // namespace kf
