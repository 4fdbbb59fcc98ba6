#pragma once
// One kfoundry worker process (an executor or a builder) seen from its parent: started with its
// channel on fds 3 and 4 and its stderr on a pipe, read with a deadline, stopped by closing the
// channel or, if it does not go, killed. The worker's stderr is passed on to ours less compiler
// chatter ("1 warning generated.") that the compile log already holds.
//
// A worker dies with the thread that started it (PR_SET_PDEATHSIG follows the forking thread),
// so the thread that starts one must outlive it: each runner and builder thread owns its own.

#include <sys/types.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/worker_error.hpp"

namespace kf {

class WorkerProcess {
 public:
  using Clock = std::chrono::steady_clock;
  enum class ReadResult { kMessage, kEof, kTimeout };

  WorkerProcess() = default;
  ~WorkerProcess() { Stop(); }
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Starts `argv` (argv[0] is the kfoundry binary) and returns its first message, the ready one,
  // waiting at most `startup_s`. Throws WorkerError when it sends {"fatal"}, exits or is late.
  nlohmann::json Start(const std::vector<std::string>& argv, double startup_s);
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  bool Send(const nlohmann::json& message);
  // Sends only when the channel has room for the whole message now (never blocks): a message
  // sent ahead must not leave the parent stuck in a write while the worker is busy.
  bool SendIfRoom(const nlohmann::json& message);
  // Reads one message into `out`, waiting at most until `deadline`.
  ReadResult Read(Clock::time_point deadline, nlohmann::json* out);
  // Closing the channel asks a healthy worker to exit; one that does not within 0.5 s is killed.
  void Stop();
  // Waits for an exited worker and says how it ended ("the executor died from SIGSEGV").
  std::string DescribeExit(const std::string& what);

 private:
  void ForwardStderr(bool drain);

  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1, stderr_from_child_ = -1;
  std::string pending_;         // bytes read past the last full line
  std::string stderr_pending_;  // the worker's stderr past its last full line
};

// Seconds as a steady-clock deadline from now.
WorkerProcess::Clock::time_point DeadlineIn(double seconds);

}  // namespace kf
