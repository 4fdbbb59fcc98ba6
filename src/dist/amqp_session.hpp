#pragma once
// One rabbitmq-c connection with its one channel, in confirm mode: what the client's I/O thread
// drives (amqp_client.hpp), and only it, since rabbitmq-c is not thread-safe. Operations throw
// AmqpLost when the connection fails (reconnect and retry) and AmqpRefused when the broker says
// no (a channel or connection closed with a reason; the connection is unusable afterwards too).

#include <amqp.h>

#include <cstdint>
#include <optional>
#include <string>

#include "dist/amqp_client.hpp"

namespace kf {

class AmqpLost : public AmqpError {
 public:
  using AmqpError::AmqpError;
};

class AmqpRefused : public AmqpError {
 public:
  using AmqpError::AmqpError;
};

struct QueueState {
  long long messages = 0;  // ready for delivery (not those delivered and unacknowledged)
  int consumers = 0;
};

// What the broker sent, once complete (a delivery's method, header and body frames together).
struct SessionEvent {
  enum class Kind { kDelivery, kConfirm, kNack, kReturn } kind = Kind::kDelivery;
  uint64_t tag = 0;       // delivery tag, or the publish sequence number a confirm is for
  bool multiple = false;  // a confirm for every sequence number up to `tag`
  bool redelivered = false;
  int64_t delivery_count = 0;
  std::string consumer_tag;
  std::string message_id;  // of a returned message
  std::string body;
};

class AmqpSession {
 public:
  // Connects, logs in, opens the channel and selects confirms.
  AmqpSession(const AmqpUrl& url, int heartbeat_s);
  ~AmqpSession();
  AmqpSession(const AmqpSession&) = delete;
  AmqpSession& operator=(const AmqpSession&) = delete;

  int Fd() const;
  // Whether a frame may be read without waiting on the socket (rabbitmq-c's own buffers).
  bool HasBufferedInput() const;

  void Declare(const QueueSpec& spec);
  // A passive declare: the queue's depth and consumers. AmqpRefused when there is no such queue
  // (the broker then closes the channel: a session for inspection only, as `kfoundry status`).
  QueueState Inspect(const std::string& queue);
  // Sets the prefetch for consumers started after it, starts one; returns its tag.
  std::string Consume(const std::string& queue, int prefetch);
  void Cancel(const std::string& consumer_tag);
  // Publishes as mandatory through the default exchange; returns the sequence number the
  // broker's confirm will carry. `message_id` comes back with a returned message.
  uint64_t Publish(const std::string& queue, const std::string& body, bool persistent,
                   const std::string& message_id);
  void Ack(uint64_t tag);
  void Reject(uint64_t tag, bool requeue);
  void SendHeartbeat();
  // The next complete event if the frames for one are at hand, without waiting.
  std::optional<SessionEvent> ReadEvent();
  // channel.close and connection.close, errors ignored.
  void CloseGracefully() noexcept;

 private:
  void Check(amqp_rpc_reply_t reply, const std::string& what);
  std::optional<SessionEvent> OnFrame(const amqp_frame_t& frame);

  amqp_connection_state_t conn_ = nullptr;
  std::string where_;  // the redacted URL, for messages
  uint64_t next_seq_ = 1;
  std::optional<SessionEvent> incoming_;  // a delivery or return awaiting its content
  uint64_t body_size_ = 0;
  bool have_header_ = false;
};

}  // namespace kf
