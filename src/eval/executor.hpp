#pragma once
// Isolated evaluation. Candidates run in a supervised executor process (`kfoundry executor`) that
// holds the device context and serves many candidates in a row. The supervisor gives each phase
// of an evaluation its own deadline — compiling; each candidate launch (derived from the
// baseline's launch time, with a floor and a ceiling); host work — and past it kills the
// executor: the candidate gets `timeout` (or `compile_error` for a compile that ran too long), a
// fresh executor starts on the next candidate and the queue goes on. A crash (a signal, a sticky
// device error found by the health check after each candidate) gives `crash` with what was
// learned. The supervisor never opens a device: only executors do.

#include <sys/types.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "core/evaluation.hpp"
#include "core/kernel.hpp"

namespace kf {

struct ExecutorOptions {
  std::string binary;  // the kfoundry executable, run as `kfoundry executor ...`
  std::string task;    // task folder
  std::string device;  // device selector ("" = default)
  std::string sizes;   // benchmark size set ("" = by device class)
  int seeds = 2;
  int warmup_runs = 3, min_runs = 10, max_runs = 100;
  double min_timed_ms = 200;
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

struct ExecutorCounters {
  int starts = 0;
  int restarts = 0;  // executors started after a fault
  std::map<std::string, int> verdicts;
  double fault_seconds =
      0;  // wall time spent on candidates that crashed or timed out, and restarts
  nlohmann::json ToJson() const;
};

// The executor could not start: a bad task (exit code 2), no device (3), anything else (1).
class ExecutorError : public std::runtime_error {
 public:
  ExecutorError(const std::string& message, int exit_code)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

class Supervisor {
 public:
  // Starts the first executor; throws ExecutorError if it cannot.
  explicit Supervisor(ExecutorOptions options);
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  Evaluation Evaluate(const Kernel& kernel, const Config& config);
  // Has the executor compile the candidate into the compile cache, launching nothing; false when
  // it did not compile (or the compile ran past its deadline: the executor is then restarted).
  bool Precompile(const Kernel& kernel, const Config& config);

  const ExecutorCounters& counters() const { return counters_; }
  // The first executor's ready message: device, backend, baseline_ms, peak bandwidth.
  const nlohmann::json& executor_info() const { return info_; }
  double launch_deadline_s() const;
  pid_t executor_pid() const { return pid_; }

 private:
  void Start();
  void Stop();
  // Reads one message into `out`, waiting at most until `deadline`.
  enum class ReadResult { kMessage, kEof, kTimeout };
  ReadResult ReadMessage(std::chrono::steady_clock::time_point deadline, nlohmann::json* out);
  std::string DescribeExit();

  ExecutorOptions options_;
  ExecutorCounters counters_;
  nlohmann::json info_;
  double baseline_ms_ = 0;
  pid_t pid_ = -1;
  // Passes the executor's stderr on, less compiler chatter ("1 warning generated.") that the
  // compile log already holds.
  void ForwardStderr(bool drain);
  int to_child_ = -1, from_child_ = -1, stderr_from_child_ = -1;
  std::string pending_;         // bytes read past the last full line
  std::string stderr_pending_;  // the executor's stderr past its last full line
  int next_id_ = 0;
};

// The executor's side: opens the device, prepares the task, then answers requests on `in_fd`
// with verdicts on `out_fd` until end of input. Returns the process exit code.
struct ExecutorArgs {
  ExecutorOptions options;
  double baseline_ms = 0;  // 0: measure it
  int in_fd = 3, out_fd = 4;
  pid_t parent = 0;  // exit at once if the parent is already gone
};
int RunExecutor(const ExecutorArgs& args);

}  // namespace kf
