#pragma once
// The coordinator's judge: candidates become run jobs on the device kind's run queue, and their
// verdicts come back on the run's results queue, matched by key (the candidate's evaluation key).
// What the search sees is the `Judge` contract, unchanged: `Submit` returns at once and `done` is
// called once, on the results thread.
//
// At least once, exactly one verdict: a job may be judged twice (a worker that died after
// judging it, before acknowledging it), so a result whose key is no longer pending (answered
// already, or cancelled) is acknowledged and dropped. A job the broker would not take is answered
// with a tool error, which stops the search as a local executor's failure does.
//
// Cancelling: each job carries the judge's current scope (the run, a number drawn once per judge,
// and how many times it cancelled before). CancelPending records that scope as cancelled in the
// store, where the workers look when they take a job (dist/cancelled_scopes.hpp), and moves on to
// a new scope: a worker skips the queued jobs of a cancelled scope without running them, and jobs
// sent afterwards (the final re-verification) run.
//
// Pinned jobs (the final re-verification: every repeat on the same device, its baseline timed
// beside it) go to one live worker's own queue (dist/run_worker.hpp), the same worker for every
// job of one pin, to its first device. When that worker is no longer alive, its pinned jobs still
// pending are sent again to the kind's queue, for any worker (a verdict that comes twice is
// dropped).
//
// A run worker's own failure (an executor that cannot start) does not come here: that worker
// gives the job back to the queue and leaves (dist/run_worker.hpp).

#include <atomic>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "dist/amqp_client.hpp"
#include "dist/run_messages.hpp"
#include "host/judge.hpp"
#include "store/store.hpp"

namespace kf {

struct RemoteJudgeOptions {
  std::string run, task_id, task_name, sizes;
  std::string task_variant;  // Task::variant and Task::defines, carried by every job
  Config task_defines;
  EvalSettings settings;  // for a candidate that brings none
  std::string run_queue;  // the device kind's (RunQueueName)
  // When set, jobs go to this build queue first (BuildQueueName: a build worker compiles each for
  // `target`, the kind's device, and forwards it to run_queue with its artifact).
  std::string build_queue;
  DeviceInfo target;
  // How many devices of the kind the live run workers serve (1 at least is assumed): the search
  // keeps twice as many candidates out.
  std::function<int()> devices;
  // The own queues of the kind's live run workers (WorkerQueueName), for pinned jobs; null or
  // none: pinned jobs go to the kind's queue like the rest.
  std::function<std::vector<std::string>()> worker_queues;
  double recheck_s = 5;  // how often the workers of pinned jobs are checked
};

class RemoteJudge : public Judge {
 public:
  // Declares the run queue and the run's results queue, and starts listening on the latter.
  // `store` is where cancelled scopes are recorded for the workers.
  RemoteJudge(AmqpClient& amqp, Store& store, RemoteJudgeOptions options);
  ~RemoteJudge() override;
  RemoteJudge(const RemoteJudge&) = delete;
  RemoteJudge& operator=(const RemoteJudge&) = delete;

  // `pinned` >= 0: on one worker (see above), the same for every job of that pin.
  void Submit(Candidate candidate, Done done, int pinned = -1) override;
  int runner_count() const override;
  // Every pending job is answered `cancelled` now, and its scope recorded as cancelled: workers
  // skip the ones still queued; a result that comes anyway (a job taken before) is dropped.
  void CancelPending() override;

  int pending() const;
  int duplicates_dropped() const { return dropped_.load(); }
  // Verdicts per worker (its id as the device) and the wall time they took there.
  std::vector<RunnerStats> worker_stats() const;

 private:
  void Listen();
  // The worker queue a pin goes to now ("" for none), chosen once while that worker lives.
  std::string PinnedQueue(int pinned);
  // Pinned jobs whose worker is gone, sent again to the kind's queue.
  void Unpin();
  void Publish(const std::string& key, const std::string& queue, const std::string& body);
  void Answer(const std::string& key, RunReply reply);

  std::string Scope() const;  // with mu_ held

  AmqpClient& amqp_;
  Store& store_;
  RemoteJudgeOptions options_;
  std::string results_queue_;
  std::string scope_prefix_;  // the run and a number drawn once
  mutable std::mutex mu_;
  int cancellations_ = 0;    // guarded by mu_
  bool scope_used_ = false;  // a job was sent in the current scope; guarded by mu_
  std::unordered_map<std::string, std::vector<Done>> pending_;
  std::vector<std::pair<std::string, std::future<PublishOutcome>>> publishing_;
  std::map<std::string, RunnerStats> workers_;
  std::map<int, std::string> pins_;  // pin → its worker's queue
  struct PinnedJob {
    std::string queue, body;
  };
  std::unordered_map<std::string, PinnedJob> pinned_jobs_;  // by key, while pending
  long long next_job_ = 0;
  std::atomic<int> dropped_{0};
  std::atomic<bool> stop_{false};
  std::thread listener_;
};

}  // namespace kf
