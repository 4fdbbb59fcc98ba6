#include "dist/propose_worker.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "dist/heartbeat.hpp"
#include "dist/queue_names.hpp"

namespace kf {

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

ProposeWorker::ProposeWorker(AmqpClient& amqp, Store& store, ProposeWorkerOptions options)
    : amqp_(amqp), store_(store), options_(std::move(options)), client_(options_.limits) {
  options_.concurrency = std::max(1, options_.concurrency);
}

ProposeWorker::~ProposeWorker() {
  {
    std::lock_guard lock(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ProposeWorker::Heartbeat(const std::string& state) {
  WorkerRecord w;
  w.id = options_.id;
  w.host = options_.host;
  w.role = "propose";
  w.queue = kProposeQueue;
  w.state = state;
  w.jobs_done = jobs_done_.load();
  nlohmann::json models = nlohmann::json::array();
  for (const ModelSettings& m : options_.models) models.push_back(m.Label());
  w.info = {{"concurrency", options_.concurrency}, {"models", models}, {"busy", busy_.load()}};
  PutHeartbeat(store_, std::move(w));
}

ProposeResultMessage ProposeWorker::Effect(const ProposeJobMessage& job, int64_t deliveries) {
  ProposeResultMessage r;
  r.run = job.run;
  r.key = job.key;
  r.worker = options_.id;
  if (deliveries >= kRunAttempts) {
    const std::string why = fmt::format(
        "{} propose workers took this {} job before and none answered (each died or lost its "
        "connection): not done again",
        deliveries, job.kind);
    r.chat.error = why;
    r.command.failure = why;
    return r;
  }
  const Clock::time_point start = Clock::now();
  if (job.kind == "chat") {
    ModelSettings model = job.model;
    model.api_key = options_.api_key;
    for (const ModelSettings& mine : options_.models)
      if (mine.Label() == job.model.Label()) model = mine;
    r.chat = options_.chat ? options_.chat->Complete(model, job.messages)
                           : client_.Complete(model, job.messages);
  } else {
    const std::string label = "worker " + options_.id + " " + job.label;
    r.command =
        options_.commands
            ? options_.commands->Run(job.command, job.input, job.timeout_s, job.max_out, label)
            : RunCommandHere(job.command, job.input, job.timeout_s, job.max_out, label);
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

void ProposeWorker::Do(const Delivery& delivery) {
  ProposeJobMessage job;
  try {
    job = ProposeJobMessageFromJson(nlohmann::json::parse(delivery.body));
  } catch (const std::exception& e) {
    fmt::print(stderr, "worker {}: a malformed job on {} sent to {}: {}\n", options_.id,
               delivery.queue, kDeadLetterQueue, e.what());
    amqp_.Reject(delivery.tag, /*requeue=*/false);
    return;
  }
  ProposeResultMessage result = Effect(job, delivery.delivery_count);
  PublishOutcome outcome = PublishOutcome::kClosed;
  try {
    outcome = amqp_.PublishAsync(job.reply_queue, ProposeResultMessageToJson(result).dump()).get();
  } catch (const std::exception& e) {
    fmt::print(stderr, "worker {}: the result of {} was not published: {}\n", options_.id, job.key,
               e.what());
  }
  if (outcome == PublishOutcome::kUnroutable)
    fmt::print(stderr, "worker {}: no queue {} (the run is gone): job {} dropped\n", options_.id,
               job.reply_queue, job.key);
  if (outcome == PublishOutcome::kConfirmed || outcome == PublishOutcome::kUnroutable) {
    amqp_.Ack(delivery.tag);
    ++jobs_done_;
  } else {  // given back: the broker gives it again
    amqp_.Reject(delivery.tag, /*requeue=*/true);
  }
}

void ProposeWorker::Work() {
  for (;;) {
    Delivery d;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return closing_ || !waiting_.empty(); });
      if (waiting_.empty()) return;
      d = std::move(waiting_.front());
      waiting_.pop_front();
    }
    Do(d);
    --busy_;
  }
}

std::string ProposeWorker::Serve(const std::atomic<bool>& stop) {
  using namespace std::chrono_literals;
  DeclareSettled(amqp_, QueueSpec(kDeadLetterQueue));
  DeclareSettled(amqp_, RunQueueSpec(kProposeQueue), options_.concurrency);
  for (int i = 0; i < options_.concurrency; ++i) threads_.emplace_back([this] { Work(); });
  std::optional<HeartbeatThread> beat;
  beat.emplace([this] { Heartbeat("running"); }, options_.heartbeat_s);
  while (!stop) {
    std::optional<Delivery> d = amqp_.Next(200ms);
    if (!d) continue;
    ++busy_;
    {
      std::lock_guard lock(mu_);
      waiting_.push_back(std::move(*d));
    }
    cv_.notify_one();
  }
  beat.reset();
  Heartbeat("draining");
  amqp_.StopConsuming();
  while (busy_ > 0) std::this_thread::sleep_for(20ms);
  Heartbeat("stopped");
  return "";
}

}  // namespace kf
