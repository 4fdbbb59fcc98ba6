#pragma once
// The coordinator's side of propose workers: a proposer's chat request or command run becomes a
// job on kf.propose, and the proposer's thread waits for its result on the run's proposals queue,
// matched by key. Everything else about proposing stays with the proposer in the coordinator.
//
// A job whose worker dies is given to another worker by the broker; one that kRunAttempts
// workers took without answering comes back as a failure (dist/propose_worker.hpp). When no
// result comes within the deadline (no propose worker is left), the call returns a failure
// saying so, which the proposer counts as a bad reply; a late result is dropped.
//
// Whether propose workers are alive is asked again as the search goes (Available, at most every
// few seconds): with none, the proposer does its side effects itself; one that joins later gets
// them from then on.

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "dist/amqp_client.hpp"
#include "dist/propose_messages.hpp"
#include "propose/effects.hpp"

namespace kf {

struct RemoteProposeOptions {
  std::string run;
  double chat_deadline_s = 1800;  // a chat request, retries included, on the worker
  double grace_s = 60;            // beyond a command's own time-out
  std::string worker_hint;        // the command that starts a propose worker, for messages
  // The live propose workers now (the store's heartbeats); null: taken to be some.
  std::function<int()> workers;
  double recheck_s = 5;                  // how old a count may be before it is asked again
  std::string effects = "side effects";  // what is done there, for messages
};

class RemoteProposeEffects : public ChatService, public CommandService {
 public:
  // `amqp` is this object's own connection: it consumes the run's proposals queue.
  RemoteProposeEffects(AmqpClient& amqp, RemoteProposeOptions options);
  ~RemoteProposeEffects() override;
  RemoteProposeEffects(const RemoteProposeEffects&) = delete;
  RemoteProposeEffects& operator=(const RemoteProposeEffects&) = delete;

  // Whether a propose worker is alive (said on stderr when that changes).
  bool Available() override;
  ChatReply Complete(const ModelSettings& model, const std::vector<ChatMessage>& messages) override;
  CommandRun Run(const std::string& command, const std::string& input, double timeout_s,
                 size_t max_out, const std::string& label) override;

  int done() const { return done_.load(); }
  int dropped() const { return dropped_.load(); }

 private:
  // The result, or nullopt with `why` set.
  std::optional<ProposeResultMessage> Call(ProposeJobMessage job, double deadline_s,
                                           std::string& why);
  void Listen();

  AmqpClient& amqp_;
  RemoteProposeOptions options_;
  std::string reply_queue_;
  std::mutex mu_;
  std::map<std::string, std::promise<ProposeResultMessage>> pending_;
  long long next_ = 0;
  std::atomic<int> done_{0}, dropped_{0};
  std::mutex count_mu_;
  std::chrono::steady_clock::time_point counted_at_;  // guarded by count_mu_
  int alive_ = -1;                                    // guarded by count_mu_; -1: not asked yet
  std::atomic<bool> stop_{false};
  std::thread listener_;
};

}  // namespace kf
