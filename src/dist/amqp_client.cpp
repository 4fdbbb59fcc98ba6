#include "dist/amqp_client.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "dist/amqp_session.hpp"

namespace kf {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kEventsPerRound = 512;  // then the commands get their turn (acks, publishes)

struct Outgoing {
  uint64_t id = 0;  // ours, across reconnections; the message id a return names
  std::string queue, body;
  bool persistent = true;
  bool returned = false;
  std::optional<DeliveryTag> ack;  // acknowledged on the I/O thread once this one is confirmed
  std::promise<PublishOutcome> outcome;
};

struct Command {
  enum class Kind { kDeclare, kConsume, kStopConsuming, kPublish, kAck, kReject };
  Kind kind = Kind::kAck;
  QueueSpec spec;  // kDeclare
  std::string queue;
  int prefetch = 0;                   // kConsume
  std::unique_ptr<Outgoing> message;  // kPublish
  DeliveryTag tag;                    // kAck, kReject
  bool requeue = false;
  std::promise<std::string> done;  // the synchronous ones: "" or the broker's refusal
};

Command MakeCommand(Command::Kind kind) {
  Command c;
  c.kind = kind;
  return c;
}

struct ConsumerSpec {
  std::string queue;
  int prefetch = 0;
};

}  // namespace

std::string_view PublishOutcomeName(PublishOutcome outcome) {
  switch (outcome) {
    case PublishOutcome::kConfirmed: return "confirmed";
    case PublishOutcome::kNacked: return "refused by the broker";
    case PublishOutcome::kUnroutable: return "unroutable (no such queue)";
    case PublishOutcome::kClosed: return "not confirmed before the client closed";
  }
  return "unknown";
}

// The I/O thread and what the callers share with it. Members under "I/O thread" are touched by
// that thread alone; the rest under mu_ (or atomic).
class AmqpClient::Io {
 public:
  Io(AmqpUrl url, AmqpOptions options) : url_(std::move(url)), options_(options) {
    wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd_ < 0) throw AmqpError("eventfd failed");
    std::future<std::string> first = first_connect_.get_future();
    thread_ = std::thread([this] { Run(); });
    if (std::string error = first.get(); !error.empty()) {
      thread_.join();
      close(wake_fd_);
      throw AmqpError(error);
    }
  }

  ~Io() {
    Close();
    close(wake_fd_);
  }

  void Close() {
    {
      std::lock_guard lock(mu_);
      closing_ = true;
    }
    wake_cv_.notify_all();
    Ring();
    if (thread_.joinable()) thread_.join();
  }

  std::string Call(Command command) {
    std::future<std::string> done = command.done.get_future();
    if (!Push(std::move(command))) return "the AMQP client is closed";
    return done.get();
  }

  std::future<PublishOutcome> Publish(std::string queue, std::string body, bool persistent,
                                      std::optional<DeliveryTag> ack = std::nullopt) {
    auto message = std::make_unique<Outgoing>();
    message->id = next_message_id_++;
    message->queue = std::move(queue);
    message->body = std::move(body);
    message->persistent = persistent;
    message->ack = ack;
    std::future<PublishOutcome> outcome = message->outcome.get_future();
    Command command = MakeCommand(Command::Kind::kPublish);
    command.message = std::move(message);
    if (!Push(std::move(command))) {
      std::promise<PublishOutcome> closed;
      closed.set_value(PublishOutcome::kClosed);
      return closed.get_future();
    }
    return outcome;
  }

  bool Settle(const DeliveryTag& tag, Command::Kind kind, bool requeue) {
    if (tag.epoch != epoch_.load()) return false;
    Command command = MakeCommand(kind);
    command.tag = tag;
    command.requeue = requeue;
    return Push(std::move(command));
  }

  std::optional<Delivery> Next(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    deliveries_cv_.wait_for(lock, timeout,
                            [&] { return !deliveries_.empty() || stopped_consuming_ || closed_; });
    if (deliveries_.empty()) return std::nullopt;
    Delivery d = std::move(deliveries_.front());
    deliveries_.pop_front();
    return d;
  }

  bool Connected() const { return connected_.load(); }
  int Reconnections() const { return reconnections_.load(); }

 private:
  bool Push(Command command) {
    {
      std::lock_guard lock(mu_);
      if (closing_) {
        if (command.kind != Command::Kind::kPublish) command.done.set_value("closed");
        return false;
      }
      commands_.push_back(std::move(command));
    }
    Ring();
    return true;
  }

  void Ring() const {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = write(wake_fd_, &one, sizeof(one));
  }

  void Log(const std::string& line) const { fmt::print(stderr, "amqp: {}\n", line); }

  // ---- the I/O thread ----

  void Run() {
    if (!ConnectFirst()) return;
    while (true) {
      if (!session_ && !Reconnect()) break;
      try {
        WaitForWork();
        const bool closing = RunCommands();
        PumpEvents();
        KeepAlive();
        if (closing) {
          session_->CloseGracefully();
          break;
        }
      } catch (const AmqpError& e) {
        Drop(e.what());
      }
    }
    Shutdown();
  }

  bool ConnectFirst() {
    const Clock::time_point deadline = Clock::now() + options_.first_connect_timeout;
    std::chrono::milliseconds delay = options_.reconnect_min;
    while (true) {
      try {
        Connect();
        first_connect_.set_value("");
        return true;
      } catch (const AmqpRefused& e) {
        first_connect_.set_value(e.what());
        return false;
      } catch (const AmqpError& e) {
        session_.reset();
        if (Clock::now() + delay > deadline) {
          first_connect_.set_value(e.what());
          return false;
        }
      }
      std::this_thread::sleep_for(delay);
      delay = std::min(delay * 2, options_.reconnect_max);
    }
  }

  // Back-off until connected (true) or closing (false).
  bool Reconnect() {
    std::chrono::milliseconds delay = options_.reconnect_min;
    while (true) {
      {
        std::unique_lock lock(mu_);
        if (wake_cv_.wait_for(lock, delay, [&] { return closing_; })) return false;
      }
      try {
        Connect();
        ++reconnections_;
        Log(fmt::format("reconnected to {}", url_.Redacted()));
        return true;
      } catch (const AmqpError& e) {
        Drop(e.what());
        delay = std::min(delay * 2, options_.reconnect_max);
      }
    }
  }

  // A new connection, set up as the last one was: queues, consumers, unconfirmed publishes.
  void Connect() {
    session_ = std::make_unique<AmqpSession>(url_, options_.heartbeat_s);
    for (const QueueSpec& spec : declared_) session_->Declare(spec);
    for (const ConsumerSpec& c : consumer_specs_) {
      consumers_[session_->Consume(c.queue, c.prefetch)] = c.queue;
    }
    while (!to_publish_.empty()) {
      auto first = to_publish_.begin();
      SendPublish(std::move(first->second));
      to_publish_.erase(first);
    }
    last_heartbeat_ = Clock::now();
    connected_ = true;
  }

  // The connection is gone: what it held is requeued by the broker, so its deliveries are
  // stale, and its unconfirmed publishes wait for the next one.
  void Drop(const std::string& reason) {
    if (session_) Log(fmt::format("{}; reconnecting", reason));
    session_.reset();
    connected_ = false;
    consumers_.clear();
    for (auto& [seq, message] : unconfirmed_) {
      message->returned = false;
      to_publish_.emplace(message->id, std::move(message));
    }
    unconfirmed_.clear();
    std::lock_guard lock(mu_);
    ++epoch_;
    deliveries_.clear();
  }

  void SendPublish(std::unique_ptr<Outgoing> message) {
    try {
      const uint64_t seq = session_->Publish(message->queue, message->body, message->persistent,
                                             std::to_string(message->id));
      unconfirmed_.emplace(seq, std::move(message));
    } catch (const AmqpError&) {
      to_publish_.emplace(message->id, std::move(message));
      throw;
    }
  }

  void WaitForWork() {
    if (session_->HasBufferedInput()) return;
    {
      std::lock_guard lock(mu_);
      if (!commands_.empty() || closing_) return;
    }
    pollfd fds[2] = {{session_->Fd(), POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    poll(fds, 2, 100);
    if ((fds[1].revents & POLLIN) != 0) {
      uint64_t count = 0;
      [[maybe_unused]] const ssize_t n = read(wake_fd_, &count, sizeof(count));
    }
  }

  // Runs the queued commands; true when closing and none is left.
  bool RunCommands() {
    while (true) {
      Command command;
      {
        std::lock_guard lock(mu_);
        if (commands_.empty()) return closing_;
        command = std::move(commands_.front());
        commands_.pop_front();
      }
      try {
        Execute(command);
      } catch (const AmqpRefused& e) {
        if (command.kind != Command::Kind::kPublish) command.done.set_value(e.what());
        throw;
      } catch (const AmqpLost&) {
        if (command.kind != Command::Kind::kPublish && command.kind != Command::Kind::kAck &&
            command.kind != Command::Kind::kReject) {
          std::lock_guard lock(mu_);  // again on the next connection
          commands_.push_front(std::move(command));
        }
        throw;
      }
    }
  }

  void Execute(Command& command) {
    switch (command.kind) {
      case Command::Kind::kDeclare:
        session_->Declare(command.spec);
        std::erase_if(declared_, [&](const QueueSpec& s) { return s.name == command.spec.name; });
        declared_.push_back(command.spec);
        command.done.set_value("");
        return;
      case Command::Kind::kConsume:
        consumers_[session_->Consume(command.queue, command.prefetch)] = command.queue;
        consumer_specs_.push_back({command.queue, command.prefetch});
        {
          std::lock_guard lock(mu_);
          stopped_consuming_ = false;
        }
        command.done.set_value("");
        return;
      case Command::Kind::kStopConsuming: StopConsuming(command); return;
      case Command::Kind::kPublish: SendPublish(std::move(command.message)); return;
      case Command::Kind::kAck:
      case Command::Kind::kReject:
        if (command.tag.epoch != epoch_.load()) return;  // the broker requeued it already
        if (command.kind == Command::Kind::kAck) {
          session_->Ack(command.tag.tag);
        } else {
          session_->Reject(command.tag.tag, command.requeue);
        }
        return;
    }
  }

  void StopConsuming(Command& command) {
    for (const auto& [tag, queue] : consumers_) session_->Cancel(tag);
    consumers_.clear();
    consumer_specs_.clear();
    // Deliveries that came before the cancellation's answer are in rabbitmq-c's queue.
    while (std::optional<SessionEvent> event = session_->ReadEvent()) Handle(*event);
    std::deque<Delivery> unclaimed;
    {
      std::lock_guard lock(mu_);
      unclaimed.swap(deliveries_);
      stopped_consuming_ = true;
    }
    deliveries_cv_.notify_all();
    for (const Delivery& d : unclaimed) session_->Reject(d.tag.tag, /*requeue=*/true);
    command.done.set_value("");
  }

  void PumpEvents() {
    for (int i = 0; i < kEventsPerRound; ++i) {
      std::optional<SessionEvent> event = session_->ReadEvent();
      if (!event) return;
      Handle(*event);
    }
  }

  void Handle(SessionEvent& event) {
    switch (event.kind) {
      case SessionEvent::Kind::kDelivery: {
        const auto consumer = consumers_.find(event.consumer_tag);
        Delivery d;
        d.queue = consumer != consumers_.end() ? consumer->second : event.consumer_tag;
        d.body = std::move(event.body);
        d.tag = {epoch_.load(), event.tag};
        d.redelivered = event.redelivered;
        d.delivery_count = event.delivery_count;
        {
          std::lock_guard lock(mu_);
          deliveries_.push_back(std::move(d));
        }
        deliveries_cv_.notify_one();
        return;
      }
      case SessionEvent::Kind::kConfirm:
      case SessionEvent::Kind::kNack: {
        const PublishOutcome nacked = PublishOutcome::kNacked;
        const auto settle = [&](Outgoing& m) {
          const PublishOutcome outcome = event.kind == SessionEvent::Kind::kNack ? nacked
                                         : m.returned ? PublishOutcome::kUnroutable
                                                      : PublishOutcome::kConfirmed;
          // A delivery of an earlier connection was requeued by the broker when it closed.
          if (m.ack && outcome != nacked && m.ack->epoch == epoch_.load()) {
            session_->Ack(m.ack->tag);
          }
          m.outcome.set_value(outcome);
        };
        if (event.multiple) {
          const auto end = unconfirmed_.upper_bound(event.tag);
          for (auto it = unconfirmed_.begin(); it != end; it = unconfirmed_.erase(it)) {
            settle(*it->second);
          }
        } else if (const auto it = unconfirmed_.find(event.tag); it != unconfirmed_.end()) {
          settle(*it->second);
          unconfirmed_.erase(it);
        }
        return;
      }
      case SessionEvent::Kind::kReturn:  // the confirm for it follows
        for (auto& [seq, message] : unconfirmed_) {
          if (std::to_string(message->id) == event.message_id) message->returned = true;
        }
        return;
    }
  }

  void KeepAlive() {
    if (options_.heartbeat_s <= 0) return;
    // Twice per interval: the broker gives up after two intervals without a frame.
    const auto half = std::chrono::milliseconds(options_.heartbeat_s * 500);
    if (Clock::now() - last_heartbeat_ < half) return;
    session_->SendHeartbeat();
    last_heartbeat_ = Clock::now();
  }

  void Shutdown() {
    session_.reset();
    connected_ = false;
    for (auto& [seq, message] : unconfirmed_) message->outcome.set_value(PublishOutcome::kClosed);
    for (auto& [id, message] : to_publish_) message->outcome.set_value(PublishOutcome::kClosed);
    unconfirmed_.clear();
    to_publish_.clear();
    std::deque<Command> left;
    {
      std::lock_guard lock(mu_);
      closing_ = true;
      closed_ = true;
      left.swap(commands_);
      deliveries_.clear();
    }
    deliveries_cv_.notify_all();
    for (Command& c : left) {
      if (c.kind == Command::Kind::kPublish) {
        c.message->outcome.set_value(PublishOutcome::kClosed);
      } else if (c.kind != Command::Kind::kAck && c.kind != Command::Kind::kReject) {
        c.done.set_value("the AMQP client closed");
      }
    }
  }

  const AmqpUrl url_;
  const AmqpOptions options_;
  int wake_fd_ = -1;
  std::thread thread_;
  std::promise<std::string> first_connect_;
  std::atomic<uint64_t> next_message_id_{1};
  std::atomic<uint64_t> epoch_{1};
  std::atomic<bool> connected_{false};
  std::atomic<int> reconnections_{0};

  // I/O thread.
  std::unique_ptr<AmqpSession> session_;
  std::vector<QueueSpec> declared_;
  std::vector<ConsumerSpec> consumer_specs_;
  std::map<std::string, std::string> consumers_;               // tag → queue
  std::map<uint64_t, std::unique_ptr<Outgoing>> unconfirmed_;  // by sequence number
  std::map<uint64_t, std::unique_ptr<Outgoing>> to_publish_;   // by id: sent in order
  Clock::time_point last_heartbeat_;

  mutable std::mutex mu_;
  std::condition_variable wake_cv_, deliveries_cv_;
  std::deque<Command> commands_;
  std::deque<Delivery> deliveries_;
  bool closing_ = false, closed_ = false, stopped_consuming_ = false;
};

AmqpClient::AmqpClient(AmqpUrl url, AmqpOptions options)
    : io_(std::make_unique<Io>(std::move(url), options)) {}

AmqpClient::~AmqpClient() = default;

void AmqpClient::Declare(const QueueSpec& spec) {
  Command command = MakeCommand(Command::Kind::kDeclare);
  command.spec = spec;
  if (std::string error = io_->Call(std::move(command)); !error.empty()) {
    throw AmqpError(error);
  }
}

std::future<PublishOutcome> AmqpClient::PublishAsync(std::string queue, std::string body,
                                                     bool persistent) {
  return io_->Publish(std::move(queue), std::move(body), persistent);
}

std::future<PublishOutcome> AmqpClient::PublishThenAck(std::string queue, std::string body,
                                                       const DeliveryTag& ack) {
  return io_->Publish(std::move(queue), std::move(body), /*persistent=*/true, ack);
}

void AmqpClient::Publish(std::string queue, std::string body, bool persistent) {
  const std::string name = queue;
  if (const PublishOutcome outcome =
          PublishAsync(std::move(queue), std::move(body), persistent).get();
      outcome != PublishOutcome::kConfirmed) {
    throw AmqpError(fmt::format("publish to {}: {}", name, PublishOutcomeName(outcome)));
  }
}

void AmqpClient::Consume(const std::string& queue, int prefetch) {
  Command command = MakeCommand(Command::Kind::kConsume);
  command.queue = queue;
  command.prefetch = prefetch;
  if (std::string error = io_->Call(std::move(command)); !error.empty()) {
    throw AmqpError(error);
  }
}

std::optional<Delivery> AmqpClient::Next(std::chrono::milliseconds timeout) {
  return io_->Next(timeout);
}

bool AmqpClient::Ack(const DeliveryTag& tag) {
  return io_->Settle(tag, Command::Kind::kAck, false);
}

bool AmqpClient::Reject(const DeliveryTag& tag, bool requeue) {
  return io_->Settle(tag, Command::Kind::kReject, requeue);
}

void AmqpClient::StopConsuming() {
  if (std::string error = io_->Call(MakeCommand(Command::Kind::kStopConsuming)); !error.empty()) {
    throw AmqpError(error);
  }
}

void AmqpClient::Close() {
  io_->Close();
}

bool AmqpClient::Connected() const {
  return io_->Connected();
}

int AmqpClient::Reconnections() const {
  return io_->Reconnections();
}

void DeclareSettled(AmqpClient& client, const QueueSpec& spec, int prefetch) {
  std::chrono::milliseconds pause(100);
  for (int attempt = 1;; ++attempt) {
    try {
      client.Declare(spec);
      if (prefetch > 0) client.Consume(spec.name, prefetch);
      return;
    } catch (const AmqpError& e) {
      if (attempt == 7) throw;
      fmt::print(stderr, "amqp: {}; trying again in {} ms\n", e.what(), pause.count());
      std::this_thread::sleep_for(pause);
      pause *= 2;
    }
  }
}

}  // namespace kf
