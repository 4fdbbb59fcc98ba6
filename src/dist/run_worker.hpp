#pragma once
// A run worker (`kfoundry worker --role run`): takes run jobs from its device kind's queue, feeds
// them to a judge of its own (today's runners and supervisors: one candidate running per device,
// one sent ahead), and publishes each verdict to the run's results queue before acknowledging
// the job, so a worker that dies loses nothing: the broker gives its unacknowledged jobs to
// another worker, and the coordinator drops a verdict that comes twice.
//
// Tasks reach a worker once: a job names its task by content id, and the worker fetches that
// bundle from the store into its cache the first time. It keeps a judge (its executors) per task,
// size set and settings, the least recently used one closed beyond a few.
//
// A job whose scope its coordinator cancelled (dist/cancelled_scopes.hpp), asked when the job is
// taken, is acknowledged without being run or answered (its coordinator answered it `cancelled`
// already); one taken before the cancellation (at most its prefetch) is judged, and its verdict
// dropped.
//
// A job that was taken by kRunAttempts workers before, none of which answered, is answered
// `crash` without being run again. When the worker itself fails (an executor that cannot start
// again), it gives the job back and stops: the job goes to another worker, and the worker's
// failure is its exit status, not a verdict.
//
// Besides its kind's queue it serves a queue of its own (WorkerQueueName, named in its heartbeat's
// info as `own_queue`): jobs pinned to one of its devices.
//
// Its heartbeat (the store's workers table) says what it serves, how many jobs it has done and
// whether it is running, draining or stopped: what `kfoundry status` shows.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/device_info.hpp"
#include "core/task.hpp"
#include "dist/amqp_client.hpp"
#include "dist/cancelled_scopes.hpp"
#include "dist/run_messages.hpp"
#include "host/judge.hpp"
#include "store/store.hpp"

namespace kf {

// The judge for one task on the worker's devices, with that benchmark size set and settings.
using JudgeFactory = std::function<std::unique_ptr<Judge>(
    const Task& task, const std::string& sizes, const EvalSettings& settings)>;

struct RunWorkerOptions {
  std::string id;  // WorkerRecord::id: "HOST:PID:run"
  std::string host;
  std::vector<DeviceInfo> devices;  // all of one kind
  std::string cache_dir;            // task bundles are unpacked under it
  double heartbeat_s = 5;
  int judges_kept = 2;                   // open judges (executors) kept for other tasks or settings
  std::function<nlohmann::json()> info;  // the heartbeat's `info` (e.g. the peak bandwidth)
};

class RunWorker {
 public:
  RunWorker(AmqpClient& amqp, Store& store, JudgeFactory factory, RunWorkerOptions options);
  ~RunWorker();
  RunWorker(const RunWorker&) = delete;
  RunWorker& operator=(const RunWorker&) = delete;

  // Serves until `stop` becomes true, then drains: takes no new job, finishes the ones it holds
  // and publishes their verdicts. Returns "" then; or why it stopped on its own.
  std::string Serve(const std::atomic<bool>& stop);

  const std::string& queue() const { return queue_; }
  const std::string& own_queue() const { return own_queue_; }
  // Whether Serve has declared its queues and consumes them (false again once it drains).
  bool consuming() const { return consuming_.load(); }
  long long jobs_done() const { return jobs_done_.load(); }
  // Jobs taken after their coordinator cancelled them: acknowledged, not run.
  long long jobs_skipped() const { return jobs_skipped_.load(); }

 private:
  struct OpenJudge {
    std::string key;
    std::unique_ptr<Task> task;
    std::unique_ptr<Judge> judge;
    int in_flight = 0;
  };

  // A verdict published with its job's ack attached (PublishThenAck), not yet settled.
  struct PendingAck {
    std::future<PublishOutcome> published;
    std::string key, results_queue;
  };

  void Take(const Delivery& delivery);
  void SettleAcks();
  void Finish(const Delivery& delivery, const RunJobMessage& job, RunReply reply, double started_s);
  OpenJudge& JudgeFor(const RunJobMessage& job);
  void Heartbeat();
  void SetState(std::string state);  // and says so in a heartbeat
  void Fail(const std::string& why);

  AmqpClient& amqp_;
  Store& store_;
  JudgeFactory factory_;
  RunWorkerOptions options_;
  std::string queue_, own_queue_;
  std::mutex mu_;
  std::list<OpenJudge> judges_;    // most recently used first
  std::atomic<int> in_flight_{0};  // jobs taken and not yet acknowledged or given back
  std::mutex acks_mu_;
  std::condition_variable acks_cv_;
  std::deque<PendingAck> acks_;  // guarded by acks_mu_
  bool acking_ = false;          // guarded by acks_mu_
  std::atomic<long long> jobs_done_{0};
  std::atomic<long long> jobs_skipped_{0};
  CancelledScopes cancelled_;
  std::string state_ = "running";  // guarded by mu_
  std::string failure_;            // guarded by mu_
  std::atomic<bool> failed_{false};
  std::atomic<bool> consuming_{false};
};

}  // namespace kf
