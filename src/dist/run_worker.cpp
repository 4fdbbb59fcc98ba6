#include "dist/run_worker.hpp"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <thread>

#include "core/codec.hpp"
#include "core/task_bundle.hpp"
#include "core/task_library.hpp"
#include "dist/heartbeat.hpp"
#include "dist/queue_names.hpp"

namespace kf {

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The verdict for a job that killed every worker that took it.
RunReply KilledItsWorkers(const RunJobMessage& job, int64_t deliveries) {
  RunReply reply;
  reply.key = job.candidate.key;
  reply.evaluation.status = Status::kCrash;
  reply.evaluation.config = job.candidate.config;
  reply.evaluation.reason = fmt::format(
      "{} workers took this candidate before and none answered (each died or lost its "
      "connection while judging it): not run again",
      deliveries);
  return reply;
}

}  // namespace

RunWorker::RunWorker(AmqpClient& amqp, Store& store, JudgeFactory factory, RunWorkerOptions options)
    : amqp_(amqp),
      store_(store),
      factory_(std::move(factory)),
      options_(std::move(options)),
      cancelled_(store_, options_.id) {
  if (options_.devices.empty()) throw std::invalid_argument("a run worker needs a device");
  queue_ = RunQueueName(options_.devices.front());
  for (const DeviceInfo& d : options_.devices) {
    if (RunQueueName(d) != queue_)
      throw std::invalid_argument(fmt::format(
          "{} and {} are different kinds of device: one worker per kind (times are compared only "
          "within a kind)",
          options_.devices.front().Label(), d.Label()));
  }
  own_queue_ = WorkerQueueName(queue_, options_.id);
}

RunWorker::~RunWorker() {
  std::list<OpenJudge> judges;
  {
    std::lock_guard lock(mu_);
    judges.swap(judges_);
  }
  judges.clear();  // each judge waits for its runners; none holds mu_ then
}

void RunWorker::SetState(std::string state) {
  {
    std::lock_guard lock(mu_);
    state_ = std::move(state);
  }
  Heartbeat();
}

void RunWorker::Heartbeat() {
  WorkerRecord w;
  w.id = options_.id;
  w.host = options_.host;
  w.role = "run";
  for (const DeviceInfo& d : options_.devices) w.devices.push_back(DeviceInfoToJson(d));
  w.queue = queue_;
  w.jobs_done = jobs_done_.load();
  if (options_.info) w.info = options_.info();
  w.info["jobs_skipped"] = jobs_skipped_.load();
  w.info["own_queue"] = own_queue_;
  {
    std::lock_guard lock(mu_);
    w.state = state_;
    if (!failure_.empty()) w.info["failure"] = failure_;
  }
  PutHeartbeat(store_, std::move(w));
}

void RunWorker::Fail(const std::string& why) {
  {
    std::lock_guard lock(mu_);
    if (failure_.empty()) failure_ = why;
  }
  failed_ = true;
}

RunWorker::OpenJudge& RunWorker::JudgeFor(const RunJobMessage& job) {
  const std::string key = JoinTaskVariant(job.task_id, job.task_variant) + "|" + job.sizes + "|" +
                          EvalSettingsToJson(job.settings).dump();
  {
    std::lock_guard lock(mu_);
    for (auto it = judges_.begin(); it != judges_.end(); ++it) {
      if (it->key == key) {
        judges_.splice(judges_.begin(), judges_, it);
        return judges_.front();
      }
    }
  }
  std::optional<TaskBundle> bundle = store_.FindTaskBundle(job.task_id);
  if (!bundle)
    throw std::runtime_error(
        fmt::format("task {} ({}) is not in the store as a bundle", job.task_name, job.task_id));
  std::string dir = UnpackTaskBundle(*bundle, options_.cache_dir);
  OpenJudge open;
  open.key = key;
  open.task = std::make_unique<Task>(LoadTask(dir, job.task_variant));
  fmt::print(stderr, "worker {}: starting a judge for {} (sizes '{}') from {}\n", options_.id,
             open.task->name, job.sizes, dir);
  open.judge = factory_(*open.task, job.sizes, job.settings);
  std::list<OpenJudge> closing;
  std::lock_guard lock(mu_);
  judges_.push_front(std::move(open));
  int kept = 0;
  for (auto it = judges_.begin(); it != judges_.end();) {
    if (++kept > options_.judges_kept + 1 && it->in_flight == 0) {
      auto next = std::next(it);
      closing.splice(closing.end(), judges_, it);
      it = next;
    } else {
      ++it;
    }
  }
  OpenJudge& front = judges_.front();
  // `closing` goes out of scope after the lock is released (declared before it): its judges
  // stop their executors without mu_ held.
  return front;
}

void RunWorker::Finish(const Delivery& delivery, const RunJobMessage& job, RunReply reply,
                       double seconds) {
  RunResultMessage result;
  result.run = job.run;
  result.worker = options_.id;
  result.seconds = seconds;
  result.reply = std::move(reply);
  result.reply.key = job.candidate.key;
  PendingAck pending{{}, result.reply.key, job.results_queue};
  try {
    pending.published = amqp_.PublishThenAck(job.results_queue,
                                             RunResultMessageToJson(result).dump(), delivery.tag);
  } catch (const std::exception& e) {
    fmt::print(stderr, "worker {}: the verdict for {} was not published: {}\n", options_.id,
               result.reply.key, e.what());
    --in_flight_;  // not acknowledged: the broker gives the job again
    return;
  }
  std::lock_guard lock(acks_mu_);
  acks_.push_back(std::move(pending));
  acks_cv_.notify_all();
}

// Counts each job once its verdict's publish is settled, in the order they finished (the client
// acknowledged the job as the confirm came): jobs are judged and their verdicts published without
// waiting for the broker in between.
void RunWorker::SettleAcks() {
  for (;;) {
    PendingAck next;
    {
      std::unique_lock lock(acks_mu_);
      acks_cv_.wait(lock, [&] { return !acks_.empty() || !acking_; });
      if (acks_.empty()) return;
      next = std::move(acks_.front());
      acks_.pop_front();
    }
    PublishOutcome outcome = next.published.get();
    if (outcome == PublishOutcome::kUnroutable) {
      // Nobody declared the run's results queue: the run is gone; the job is done with.
      fmt::print(stderr, "worker {}: no results queue {} (the run is gone): job {} dropped\n",
                 options_.id, next.results_queue, next.key);
    }
    if (outcome == PublishOutcome::kConfirmed || outcome == PublishOutcome::kUnroutable) {
      ++jobs_done_;
    }  // else not acknowledged: the broker gives the job again, to this worker or another
    --in_flight_;
  }
}

void RunWorker::Take(const Delivery& delivery) {
  const Clock::time_point started = Clock::now();
  RunJobMessage job;
  try {
    job = RunJobMessageFromJson(nlohmann::json::parse(delivery.body));
  } catch (const std::exception& e) {
    fmt::print(stderr, "worker {}: a malformed job on {} sent to {}: {}\n", options_.id,
               delivery.queue, kDeadLetterQueue, e.what());
    amqp_.Reject(delivery.tag, /*requeue=*/false);
    return;
  }
  if (cancelled_.Cancelled(job.scope)) {
    amqp_.Ack(delivery.tag);
    ++jobs_skipped_;
    return;
  }
  if (delivery.delivery_count >= kRunAttempts) {
    ++in_flight_;
    Finish(delivery, job, KilledItsWorkers(job, delivery.delivery_count), 0);
    return;
  }
  OpenJudge* open = nullptr;
  try {
    open = &JudgeFor(job);
  } catch (const std::exception& e) {
    amqp_.Reject(delivery.tag, /*requeue=*/true);
    Fail(fmt::format("cannot judge {} of run {}: {}", job.task_name, job.run, e.what()));
    return;
  }
  {
    std::lock_guard lock(mu_);
    ++open->in_flight;
  }
  ++in_flight_;
  Candidate candidate = job.candidate;
  std::optional<CompileResult> built = job.compiled;
  job.compiled.reset();  // the callback's copy needs no binary
  auto done = [this, delivery, job, started, open](JudgeResult r) {
    {
      std::lock_guard lock(mu_);
      --open->in_flight;
    }
    if (!r.tool_error.empty()) {
      amqp_.Reject(delivery.tag, /*requeue=*/true);
      Fail(r.tool_error);
      --in_flight_;
    } else {
      Finish(delivery, job, std::move(r), SecondsSince(started));
    }
  };
  const int pinned =
      job.pinned >= 0 && job.pinned < static_cast<int>(options_.devices.size()) ? job.pinned : -1;
  if (built)
    open->judge->SubmitBuilt(std::move(candidate), *built, std::move(done));
  else
    open->judge->Submit(std::move(candidate), std::move(done), pinned);
}

std::string RunWorker::Serve(const std::atomic<bool>& stop) {
  using namespace std::chrono_literals;
  DeclareSettled(amqp_, QueueSpec(kDeadLetterQueue));
  // One candidate running on each device and one sent ahead.
  DeclareSettled(amqp_, RunQueueSpec(queue_), 2 * static_cast<int>(options_.devices.size()));
  DeclareSettled(amqp_, RunQueueSpec(own_queue_), 2 * static_cast<int>(options_.devices.size()));
  consuming_ = true;

  std::optional<HeartbeatThread> beat;
  beat.emplace([this] { Heartbeat(); }, options_.heartbeat_s);

  acking_ = true;
  std::thread acker([this] { SettleAcks(); });

  while (!stop && !failed_) {
    if (std::optional<Delivery> d = amqp_.Next(200ms)) Take(*d);
  }
  SetState("draining");
  consuming_ = false;
  amqp_.StopConsuming();
  while (in_flight_ > 0) std::this_thread::sleep_for(20ms);
  {
    std::lock_guard lock(acks_mu_);
    acking_ = false;
    acks_cv_.notify_all();
  }
  acker.join();
  beat.reset();
  SetState("stopped");
  std::lock_guard lock(mu_);
  return failure_;
}

}  // namespace kf
