#pragma once
// The executor's side of isolated evaluation (`kfoundry executor`): opens the device, prepares
// the task's reference and baseline once, says it is ready, then answers run requests on its
// channel with verdicts until end of input. After every candidate a health check: a sticky
// device error makes the verdict `crash` and the process exits (only a new process helps).

#include <sys/types.h>

#include "eval/evaluator.hpp"
#include "eval/supervisor.hpp"

namespace kf {

struct ExecutorArgs {
  ExecutorOptions options;
  std::string settings_json;  // the default EvalSettings, as EvalSettingsToJson writes them
  double baseline_ms = 0;     // 0: measure it
  int in_fd = 3, out_fd = 4;
  pid_t parent = 0;                         // exit at once if the parent is already gone
  ReferenceSourceFactory reference_source;  // for a task whose reference is not a kernel
};

// Returns the process exit code.
int RunExecutor(const ExecutorArgs& args);

// The message saying a phase starts and where ({"phase", "launches", "step", "sizes", "seed",
// "launch", "compiling_s"}), and the place read back from one.
nlohmann::json PhaseMessage(EvalPhase phase, int launches, const EvalPlace& place,
                            double compiling_s = 0);
EvalPlace PlaceFromMessage(const nlohmann::json& message);

// Limits a worker process (RLIMIT_AS in GiB, RLIMIT_CPU in seconds; 0 = none), and makes it die
// with its parent and keep its stdout off the channel. False when the parent is already gone.
bool BecomeWorker(pid_t parent, double address_space_gib, double cpu_seconds);

}  // namespace kf
