#include "dist/remote_propose.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "dist/queue_names.hpp"

namespace kf {

RemoteProposeEffects::RemoteProposeEffects(AmqpClient& amqp, RemoteProposeOptions options)
    : amqp_(amqp), options_(std::move(options)), reply_queue_(ProposalsQueueName(options_.run)) {
  DeclareSettled(amqp_, QueueSpec(kDeadLetterQueue));
  DeclareSettled(amqp_, RunQueueSpec(kProposeQueue));
  DeclareSettled(amqp_, QueueSpec(reply_queue_), 64);
  listener_ = std::thread([this] { Listen(); });
}

RemoteProposeEffects::~RemoteProposeEffects() {
  stop_ = true;
  listener_.join();
}

std::optional<ProposeResultMessage> RemoteProposeEffects::Call(ProposeJobMessage job,
                                                               double deadline_s,
                                                               std::string& why) {
  std::future<ProposeResultMessage> result;
  {
    std::lock_guard lock(mu_);
    job.key = fmt::format("{}.p{}", options_.run, next_++);
    result = pending_[job.key].get_future();
  }
  job.run = options_.run;
  job.reply_queue = reply_queue_;
  const std::string key = job.key;
  auto forget = [&] {
    std::lock_guard lock(mu_);
    pending_.erase(key);
  };
  PublishOutcome published = PublishOutcome::kClosed;
  try {
    published = amqp_.PublishAsync(kProposeQueue, ProposeJobMessageToJson(job).dump()).get();
  } catch (const std::exception& e) {
    why = e.what();
  }
  if (published != PublishOutcome::kConfirmed) {
    forget();
    why = fmt::format("the broker did not take the {} job for {}: {}", job.kind, kProposeQueue,
                      why.empty() ? std::string(PublishOutcomeName(published)) : why);
    return std::nullopt;
  }
  if (result.wait_for(std::chrono::duration<double>(deadline_s)) != std::future_status::ready) {
    forget();
    why = fmt::format(
        "no propose worker answered within {:.0f} s{}", deadline_s,
        options_.worker_hint.empty() ? "" : " (start one: " + options_.worker_hint + ")");
    return std::nullopt;
  }
  ++done_;
  return result.get();
}

ChatReply RemoteProposeEffects::Complete(const ModelSettings& model,
                                         const std::vector<ChatMessage>& messages) {
  ProposeJobMessage job;
  job.kind = "chat";
  job.model = model;
  job.model.api_key.clear();  // the worker holds its keys
  job.messages = messages;
  job.label = model.Label();
  std::string why;
  std::optional<ProposeResultMessage> r = Call(std::move(job), options_.chat_deadline_s, why);
  if (r) return std::move(r->chat);
  ChatReply failed;
  failed.error = why;
  return failed;
}

bool RemoteProposeEffects::Available() {
  if (!options_.workers) return true;
  std::lock_guard lock(count_mu_);
  const auto now = std::chrono::steady_clock::now();
  if (alive_ >= 0 && now - counted_at_ < std::chrono::duration<double>(options_.recheck_s))
    return alive_ > 0;
  int alive = alive_;
  try {
    alive = options_.workers();
  } catch (const std::exception& e) {  // the last count stands until the store answers
    fmt::print(stderr, "coordinator: cannot count propose workers: {}\n", e.what());
  }
  counted_at_ = now;
  if (alive_ < 0 || (alive > 0) != (alive_ > 0)) {
    if (alive > 0)
      fmt::print(stderr, "propose workers: {} alive; the {} are done there\n", alive,
                 options_.effects);
    else
      fmt::print(stderr, "propose workers: none alive; the {} are done here\n", options_.effects);
  }
  alive_ = std::max(alive, 0);
  return alive_ > 0;
}

CommandRun RemoteProposeEffects::Run(const std::string& command, const std::string& input,
                                     double timeout_s, size_t max_out, const std::string& label) {
  ProposeJobMessage job;
  job.kind = "command";
  job.command = command;
  job.input = input;
  job.timeout_s = timeout_s;
  job.max_out = max_out;
  job.label = label;
  std::string why;
  std::optional<ProposeResultMessage> r = Call(std::move(job), timeout_s + options_.grace_s, why);
  if (r) return std::move(r->command);
  return {"", why};
}

void RemoteProposeEffects::Listen() {
  using namespace std::chrono_literals;
  while (!stop_) {
    std::optional<Delivery> d = amqp_.Next(100ms);
    if (!d) continue;
    try {
      ProposeResultMessage result = ProposeResultMessageFromJson(nlohmann::json::parse(d->body));
      std::lock_guard lock(mu_);
      auto it = pending_.find(result.key);
      if (result.run != options_.run || it == pending_.end()) {
        ++dropped_;  // answered already (a redelivered job), or given up on
      } else {
        it->second.set_value(std::move(result));
        pending_.erase(it);
      }
    } catch (const std::exception& e) {
      fmt::print(stderr, "coordinator: a malformed proposer result on {} dropped: {}\n", d->queue,
                 e.what());
    }
    amqp_.Ack(d->tag);
  }
}

}  // namespace kf
