#pragma once
// The executor's side of isolated evaluation (`kfoundry executor`): opens the device, prepares
// the task's reference and baseline once, says it is ready, then answers run requests on its
// channel with verdicts until end of input. After every candidate a health check: a sticky
// device error makes the verdict `crash` and the process exits (only a new process helps).

#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/evaluation.hpp"
#include "eval/evaluator.hpp"

namespace kf {

struct ExecutorOptions {
  std::string binary;     // the kfoundry executable, run as `kfoundry executor ...`
  std::string task;       // task folder
  std::string device;     // device selector ("" = default)
  std::string sizes;      // benchmark size set ("" = by device class)
  EvalSettings settings;  // for a candidate that brings none (thorough by default)
  double compile_timeout_s = 120;
  double launch_factor = 100;  // a launch may take this many times the baseline's launch
  double launch_floor_s = 2, launch_ceiling_s = 120;
  double host_timeout_s = 900;  // input generation, reference launches, comparisons
  double startup_timeout_s = 600;
  double baseline_ms = 0;  // the baseline's launch time when already known (not measured again)
  double address_space_gib = 0;  // RLIMIT_AS of the executor; 0 = none (CUDA maps a large VA)
  double cpu_seconds = 0;        // RLIMIT_CPU of the executor; 0 = none
};

// `options` aimed at a task on a device: the kfoundry executable, the task folder, the device
// selector and the benchmark size set ("" = by device class).
ExecutorOptions Aimed(ExecutorOptions options, std::string binary, std::string task_dir,
                      std::string device, std::string sizes);

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
