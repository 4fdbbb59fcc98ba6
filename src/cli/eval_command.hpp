#pragma once
// `kfoundry eval`: one kernel compiled, checked and timed against a task's reference and
// baseline through the judge (a builder where the backend compiles offline, the supervised
// executor), classified, and printed (or one JSON object with --json).

#include <string>
#include <vector>

#include "host/supervisor.hpp"

namespace kf {

struct EvalArgs {
  std::string task, kernel, device, sizes;
  std::vector<std::string> sets;
  EvalSettings settings = EvalSettings::Thorough();
  bool json = false;
  bool in_process = false;
  ExecutorOptions executor;  // deadlines and limits
};

int RunEval(const EvalArgs& args, const std::string& self);

// The text output's warning for a kernel shown over 100% of the device's peak bandwidth.
void WarnIfOverPeak(const Evaluation& ev);

// The text output's lines for PyTorch's own times (a task whose reference is a PyTorch module):
// "vs torch eager  2.315x (0.8123 ms on cpu (PyTorch 1.13.0, 2 threads))", or why none.
void PrintExternalBaselines(const Evaluation& ev);

}  // namespace kf
