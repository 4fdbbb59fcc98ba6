#pragma once
// Runners: one per device, each a thread that owns that device's supervised executor and runs one
// candidate at a time (timing stays honest: nothing else runs on the device meanwhile). Runners
// take their work from one shared queue, so a free device takes the next candidate; a job may be
// pinned to one runner (the final re-verification runs on one device). While its executor runs
// one candidate, a runner sends it the next (Supervisor::SubmitAhead), so the device does not
// wait for a round trip between two candidates; the next one still starts only when the first
// is done.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/candidate.hpp"
#include "host/supervisor.hpp"

namespace kf {

struct RunJob {
  RunRequest request;
  std::function<void(RunReply)> done;  // called on the runner's thread
  int pinned = -1;                     // the runner that must run it; -1: any
  std::function<bool()> cancelled;     // checked before it runs; may be empty
};

class RunQueue {
 public:
  void Push(RunJob job);
  // The next job runner `index` may take; nullopt once closed and drained.
  std::optional<RunJob> Pop(int index);
  // A job runner `index` may take now, without waiting, and only while no runner is waiting for
  // one (a runner that takes a job ahead must not take it from an idle device).
  std::optional<RunJob> TryPop(int index);
  void Close();  // wakes every runner; jobs still queued are run first
  int size() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<RunJob> jobs_;
  bool closed_ = false;
  int waiting_ = 0;  // runners blocked in Pop
};

class Runner {
 public:
  // Starts the thread, which starts the executor; throws WorkerError (after the thread is done)
  // when the executor cannot start.
  Runner(int index, ExecutorOptions options, RunQueue& queue);
  ~Runner();  // the queue must be closed first
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  int index() const { return index_; }
  const ExecutorInfo& info() const { return info_; }
  // Seconds the executor spent on candidates, the candidates run, and counters (at any time).
  double busy_seconds() const;
  int jobs_run() const;
  ExecutorCounters counters() const;

 private:
  void Work(std::promise<ExecutorInfo> ready);

  int index_;
  ExecutorOptions options_;
  RunQueue& queue_;
  ExecutorInfo info_;
  mutable std::mutex mutex_;
  double busy_seconds_ = 0;
  int jobs_run_ = 0;
  ExecutorCounters counters_;
  std::thread thread_;
};

}  // namespace kf
