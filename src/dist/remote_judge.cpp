#include "dist/remote_judge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "dist/queue_names.hpp"

namespace kf {

namespace {

// Tells one judge's scopes from those of another coordinator of the same run (a resumed one).
uint64_t DrawNumber() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

}  // namespace

RemoteJudge::RemoteJudge(AmqpClient& amqp, Store& store, RemoteJudgeOptions options)
    : amqp_(amqp),
      store_(store),
      options_(std::move(options)),
      results_queue_(ResultsQueueName(options_.run)),
      scope_prefix_(fmt::format("{}.{:016x}", options_.run, DrawNumber())) {
  DeclareSettled(amqp_, QueueSpec(kDeadLetterQueue));
  DeclareSettled(amqp_, RunQueueSpec(options_.run_queue));
  if (!options_.build_queue.empty()) DeclareSettled(amqp_, RunQueueSpec(options_.build_queue));
  DeclareSettled(amqp_, QueueSpec(results_queue_), 256);
  listener_ = std::thread([this] { Listen(); });
}

RemoteJudge::~RemoteJudge() {
  stop_ = true;
  listener_.join();
}

void RemoteJudge::Submit(Candidate candidate, Done done, int pinned) {
  RunJobMessage job;
  job.run = options_.run;
  job.results_queue = results_queue_;
  job.task_id = options_.task_id;
  job.task_name = options_.task_name;
  job.task_variant = options_.task_variant;
  job.task_defines = options_.task_defines;
  job.sizes = options_.sizes;
  job.settings = options_.settings;
  std::string key = candidate.key;
  {
    std::lock_guard lock(mu_);
    if (key.empty()) key = candidate.key = fmt::format("{}.job{}", options_.run, next_job_++);
    pending_[key].push_back(std::move(done));
    job.scope = Scope();
    scope_used_ = true;
  }
  job.candidate = std::move(candidate);
  std::string queue = pinned >= 0 ? PinnedQueue(pinned) : "";
  if (!queue.empty()) {
    job.pinned = 0;  // compiled where it runs: a pinned job is one of a few
    std::string body = RunJobMessageToJson(job).dump();
    {
      std::lock_guard lock(mu_);
      pinned_jobs_[key] = {queue, body};
    }
    Publish(key, queue, body);
    return;
  }
  queue = options_.run_queue;
  if (!options_.build_queue.empty()) {
    queue = options_.build_queue;
    job.run_queue = options_.run_queue;
    job.target = options_.target;
  }
  Publish(key, queue, RunJobMessageToJson(job).dump());
}

void RemoteJudge::Publish(const std::string& key, const std::string& queue,
                          const std::string& body) {
  std::future<PublishOutcome> published = amqp_.PublishAsync(queue, body);
  std::lock_guard lock(mu_);
  publishing_.emplace_back(key, std::move(published));
}

std::string RemoteJudge::PinnedQueue(int pinned) {
  if (!options_.worker_queues) return "";
  std::vector<std::string> live = options_.worker_queues();
  std::lock_guard lock(mu_);
  auto it = pins_.find(pinned);
  if (it != pins_.end() && std::find(live.begin(), live.end(), it->second) != live.end())
    return it->second;
  if (live.empty()) return "";
  std::sort(live.begin(), live.end());
  std::string queue = live[static_cast<size_t>(pinned) % live.size()];
  pins_[pinned] = queue;
  return queue;
}

void RemoteJudge::Unpin() {
  std::vector<std::string> live = options_.worker_queues();
  std::vector<std::pair<std::string, std::string>> again;  // key, body
  {
    std::lock_guard lock(mu_);
    for (auto it = pinned_jobs_.begin(); it != pinned_jobs_.end();) {
      if (!pending_.count(it->first)) {
        it = pinned_jobs_.erase(it);
      } else if (std::find(live.begin(), live.end(), it->second.queue) == live.end()) {
        again.emplace_back(it->first, std::move(it->second.body));
        it = pinned_jobs_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const auto& [key, body] : again) {
    fmt::print(stderr, "coordinator: the worker of pinned job {} is gone: sent to {}\n", key,
               options_.run_queue);
    Publish(key, options_.run_queue, body);
  }
}

int RemoteJudge::runner_count() const {
  return std::max(1, options_.devices ? options_.devices() : 1);
}

std::string RemoteJudge::Scope() const {
  return fmt::format("{}.{}", scope_prefix_, cancellations_);
}

void RemoteJudge::CancelPending() {
  std::unordered_map<std::string, std::vector<Done>> cancelled;
  std::string scope;
  {
    std::lock_guard lock(mu_);
    cancelled.swap(pending_);
    if (scope_used_) scope = Scope();
    ++cancellations_;
    scope_used_ = false;
  }
  if (!scope.empty()) {
    try {
      store_.CancelScope(scope);
    } catch (const std::exception& e) {  // the workers then run what is queued; dropped here
      fmt::print(stderr, "coordinator: the store did not record cancelled jobs {}: {}\n", scope,
                 e.what());
    }
  }
  for (auto& [key, dones] : cancelled) {
    for (Done& done : dones) {
      RunReply reply;
      reply.key = key;
      reply.cancelled = true;
      done(std::move(reply));
    }
  }
}

int RemoteJudge::pending() const {
  std::lock_guard lock(mu_);
  int n = 0;
  for (const auto& [key, dones] : pending_) n += static_cast<int>(dones.size());
  return n;
}

std::vector<RunnerStats> RemoteJudge::worker_stats() const {
  std::lock_guard lock(mu_);
  std::vector<RunnerStats> out;
  for (const auto& [worker, stats] : workers_) out.push_back(stats);
  return out;
}

void RemoteJudge::Answer(const std::string& key, RunReply reply) {
  std::vector<Done> dones;
  {
    std::lock_guard lock(mu_);
    auto it = pending_.find(key);
    if (it == pending_.end()) {
      ++dropped_;
      return;
    }
    dones = std::move(it->second);
    pending_.erase(it);
  }
  for (size_t i = 0; i + 1 < dones.size(); ++i) dones[i](reply);
  dones.back()(std::move(reply));
}

void RemoteJudge::Listen() {
  using namespace std::chrono_literals;
  auto unpinned = std::chrono::steady_clock::now();
  while (!stop_) {
    if (options_.worker_queues && std::chrono::steady_clock::now() - unpinned >
                                      std::chrono::duration<double>(options_.recheck_s)) {
      unpinned = std::chrono::steady_clock::now();
      try {
        Unpin();
      } catch (const std::exception& e) {  // the store answers again later
        fmt::print(stderr, "coordinator: cannot check the workers of pinned jobs: {}\n", e.what());
      }
    }
    // Jobs the broker refused (or the client closed under): answered as the tool's failure.
    std::vector<std::pair<std::string, PublishOutcome>> failed;
    {
      std::lock_guard lock(mu_);
      for (auto it = publishing_.begin(); it != publishing_.end();) {
        if (it->second.wait_for(0s) != std::future_status::ready) {
          ++it;
          continue;
        }
        PublishOutcome outcome = it->second.get();
        if (outcome != PublishOutcome::kConfirmed) failed.emplace_back(it->first, outcome);
        it = publishing_.erase(it);
      }
    }
    for (const auto& [key, outcome] : failed) {
      RunReply reply;
      reply.key = key;
      reply.tool_error = fmt::format("the broker did not take run job {} for {}: {}", key,
                                     options_.run_queue, PublishOutcomeName(outcome));
      Answer(key, std::move(reply));
    }

    std::optional<Delivery> d = amqp_.Next(100ms);
    if (!d) continue;
    RunResultMessage result;
    try {
      result = RunResultMessageFromJson(nlohmann::json::parse(d->body));
    } catch (const std::exception& e) {
      fmt::print(stderr, "coordinator: a malformed result on {} dropped: {}\n", d->queue, e.what());
      amqp_.Ack(d->tag);
      continue;
    }
    if (result.run == options_.run) {
      {
        std::lock_guard lock(mu_);
        if (pending_.count(result.reply.key)) {
          RunnerStats& w = workers_[result.worker];
          w.device = result.worker;
          ++w.jobs;
          w.busy_seconds += result.seconds;
        }
      }
      const std::string key = result.reply.key;  // not a reference into what is moved
      Answer(key, std::move(result.reply));
    } else {
      ++dropped_;
    }
    amqp_.Ack(d->tag);
  }
}

}  // namespace kf
