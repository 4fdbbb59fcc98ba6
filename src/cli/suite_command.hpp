#pragma once
// `kfoundry suite DIR...`: optimize's search on each of a set of tasks, one budget each, one run
// each named NAME-TASK in one store (so --resume continues the suite where it stopped, a finished
// task judging nothing), then KernelBench's figures over the problems (report/suite_figures.hpp)
// and their table, in text or one JSON object.

#include <string>
#include <vector>

#include "cli/optimize_command.hpp"

namespace kf {

struct SuiteArgs {
  std::vector<std::string> dirs;  // task folders, folders of task folders, bundled names
  OptimizeArgs search;            // the options every task's run starts with
  std::string name = "suite";
  bool resume = false;
};

int RunSuite(const SuiteArgs& args, const std::string& self);

}  // namespace kf
