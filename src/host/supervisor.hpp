#pragma once
// Isolated evaluation. Candidates run in a supervised executor process (`kfoundry executor`) that
// holds the device context and serves many candidates in a row. The supervisor gives each phase
// of an evaluation its own deadline — compiling; each candidate launch (derived from the
// baseline's launch time, with a floor and a ceiling, and more for a first launch that may
// compile); host work — and past it kills the
// executor: the candidate gets `timeout` (or `compile_error` for a compile that ran too long), a
// fresh executor starts on the next candidate and the queue goes on. A crash (a signal, a sticky
// device error found by the health check after each candidate) gives `crash` with what was
// learned. The supervisor never opens a device: only executors do.

#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/candidate.hpp"
#include "core/device_info.hpp"
#include "core/evaluation.hpp"
#include "eval/executor_main.hpp"
#include "eval/worker_process.hpp"

namespace kf {

struct ExecutorCounters {
  int starts = 0;
  int restarts = 0;  // executors started after a fault
  std::map<std::string, int> verdicts;
  double fault_seconds = 0;  // wall time of candidates that crashed or timed out, and restarts
  nlohmann::json ToJson() const;
  void Add(const ExecutorCounters& other);
};

// What the first executor said when it was ready.
struct ExecutorInfo {
  DeviceInfo device;
  double baseline_ms = 0;  // one baseline launch at the benchmark sizes
  double peak_gbs = 0;     // the device's peak bandwidth and where the figure came from
  std::string peak_source;
  double peak_gflops = 0;  // its peak arithmetic rate (the fastest class), and whence
  std::string peak_gflops_source;
};

class Supervisor {
 public:
  // Starts the first executor; throws WorkerError if it cannot.
  explicit Supervisor(ExecutorOptions options);
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // A candidate's evaluation: sent with `Submit`, its reply taken with `Await`, in the order
  // sent. `SubmitAhead` sends a second candidate while the first runs, so the executor starts it
  // the moment it answers the first (no round trip between candidates); it sends nothing and
  // returns nullopt when the channel has no room for it now. A candidate that was sent ahead to
  // an executor that then died is sent again to the next one.
  int Submit(RunRequest request);
  std::optional<int> SubmitAhead(RunRequest request);
  RunReply Await(int ticket);
  RunReply Run(const RunRequest& request) { return Await(Submit(request)); }
  Evaluation Evaluate(const Kernel& kernel, const Config& config) {
    return Run(RunRequest{{kernel, config}, std::nullopt}).evaluation;
  }

  const ExecutorCounters& counters() const { return counters_; }
  const ExecutorInfo& info() const { return info_; }
  double launch_deadline_s() const;  // of one candidate launch
  pid_t executor_pid() const { return process_.pid(); }

 private:
  struct Sent {
    int id;
    RunRequest request;
    bool sent = false;  // to the executor now running
  };
  void Start();
  bool SendTo(Sent& s, bool wait);
  double PhaseSeconds(const std::string& phase, int launches) const;
  // What a launch that may compile first (`compiling_s` said by the executor) gets on top of its
  // deadline: the time said, at least the launch floor, at most the compile timeout.
  double CompilingSeconds(double said) const;

  ExecutorOptions options_;
  ExecutorCounters counters_;
  ExecutorInfo info_;
  WorkerProcess process_;
  int next_id_ = 0;
  std::deque<Sent> queued_;  // submitted, reply not yet awaited; the first is the one running
};

}  // namespace kf
