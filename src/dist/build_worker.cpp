#include "dist/build_worker.hpp"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "dist/heartbeat.hpp"
#include "dist/queue_names.hpp"
#include "dist/run_messages.hpp"

namespace kf {

BuildWorker::BuildWorker(AmqpClient& amqp, Store& store, CompileFunction compile,
                         BuildWorkerOptions options)
    : amqp_(amqp),
      store_(store),
      compile_(std::move(compile)),
      options_(std::move(options)),
      queue_(BuildQueueName(options_.backend)),
      cancelled_(store_, options_.id) {}

void BuildWorker::Heartbeat(const std::string& state) {
  WorkerRecord w;
  w.id = options_.id;
  w.host = options_.host;
  w.role = "build";
  w.queue = queue_;
  w.state = state;
  w.jobs_done = jobs_done_.load();
  w.info = {{"jobs", options_.jobs}, {"jobs_skipped", jobs_skipped_.load()}};
  PutHeartbeat(store_, std::move(w));
}

void BuildWorker::Take(const Delivery& delivery) {
  RunJobMessage job;
  try {
    job = RunJobMessageFromJson(nlohmann::json::parse(delivery.body));
    if (job.run_queue.empty() || !job.target)
      throw std::invalid_argument("a build job needs its run_queue and target");
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
  ++in_flight_;
  auto forward = [this, delivery, job](std::optional<CompileResult> built) mutable {
    job.compiled = std::move(built);
    const std::string run_queue = job.run_queue;
    job.run_queue.clear();
    job.target.reset();
    PublishOutcome outcome = PublishOutcome::kClosed;
    try {
      outcome = amqp_.PublishAsync(run_queue, RunJobMessageToJson(job).dump()).get();
    } catch (const std::exception& e) {
      fmt::print(stderr, "worker {}: job {} not forwarded: {}\n", options_.id, job.candidate.key,
                 e.what());
    }
    if (outcome == PublishOutcome::kConfirmed) {
      amqp_.Ack(delivery.tag);
      ++jobs_done_;
    } else {  // given back: the broker gives it again
      fmt::print(stderr, "worker {}: job {} not forwarded to {}: {}\n", options_.id,
                 job.candidate.key, run_queue, PublishOutcomeName(outcome));
      amqp_.Reject(delivery.tag, /*requeue=*/true);
    }
    --in_flight_;
  };
  if (delivery.delivery_count >= kRunAttempts) {
    forward(std::nullopt);  // compiled where it runs instead
    return;
  }
  CompileRequest request =
      CompileRequestFor(job.candidate.kernel, job.candidate.config, job.task_defines);
  compile_(*job.target, std::move(request), std::move(forward));
}

std::string BuildWorker::Serve(const std::atomic<bool>& stop) {
  using namespace std::chrono_literals;
  DeclareSettled(amqp_, QueueSpec(kDeadLetterQueue));
  DeclareSettled(amqp_, RunQueueSpec(queue_), 2 * std::max(1, options_.jobs));
  std::optional<HeartbeatThread> beat;
  beat.emplace([this] { Heartbeat("running"); }, options_.heartbeat_s);
  while (!stop) {
    if (std::optional<Delivery> d = amqp_.Next(200ms)) Take(*d);
  }
  beat.reset();
  Heartbeat("draining");
  amqp_.StopConsuming();
  while (in_flight_ > 0) std::this_thread::sleep_for(20ms);
  Heartbeat("stopped");
  return "";
}

}  // namespace kf
