#pragma once
// `kfoundry tune`: a template's parameter space searched on a live device, or a recorded space
// replayed (--replay), by one of the strategies.

#include <string>

#include "host/supervisor.hpp"

namespace kf {

struct TuneArgs {
  std::string task, kernel, replay, strategy, device, sizes, record;
  int budget = 100;
  double seconds = 0;
  unsigned long long seed = 1;
  bool json = false;
  bool no_rules = false;
  std::string rules_dir;  // "" = the default rules folder
  ExecutorOptions executor;
  // How candidates of the search are judged (the final re-verification is always thorough).
  EvalSettings settings = EvalSettings::Fast();
};

int RunTune(TuneArgs args, const std::string& self);

}  // namespace kf
