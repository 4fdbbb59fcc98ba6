#pragma once
// The AMQP 0-9-1 transport (RabbitMQ through rabbitmq-c): durable quorum queues, publishes that
// return once the broker confirmed them, deliveries acknowledged by hand, a delivery limit with
// a dead-letter route, heartbeats and reconnection. Message bodies are the core codecs' JSON.
//
// Design. rabbitmq-c is not thread-safe and answers heartbeats only while someone reads frames,
// so one I/O thread owns the connection and makes every library call: it waits on the socket
// and on an eventfd that callers ring, writes the callers' publishes, acks and rejects, reads
// deliveries, confirms and returns, and sends a heartbeat every half interval. A caller busy for
// minutes on a GPU job keeps its connection, since it never has to call in. Callers talk to the
// thread through a command queue (publishes, acks) and a delivery queue (Next).
//
// When the connection fails (broker restart, missed heartbeats, a channel error) the thread
// reconnects with exponential back-off, declares its queues again, consumes again and publishes
// again every message not yet confirmed (at-least-once: content-hashed job keys make a duplicate
// harmless). Each connection is an epoch: deliveries of an earlier one were requeued by the
// broker when it went, so their tags are stale: Ack and Reject of one return false and send
// nothing, and undelivered ones are dropped from the local queue.
//
// Draining (a worker's SIGTERM): StopConsuming() cancels the consumers, gives back (requeues) the
// deliveries still waiting locally, and Next() then returns nothing; the worker finishes its
// in-flight job, publishes its result, acks the job, and Close() sends what is queued before it
// closes the connection.

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "dist/amqp_url.hpp"

namespace kf {

class AmqpError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct AmqpOptions {
  int heartbeat_s = 30;  // 0: none
  std::chrono::milliseconds first_connect_timeout{std::chrono::seconds(30)};
  std::chrono::milliseconds reconnect_min{100};  // back-off doubles from here, reset on success
  std::chrono::milliseconds reconnect_max{std::chrono::seconds(5)};
};

// A durable quorum queue. With a delivery limit, a message delivered more than that many times
// without an ack (each worker that took it died or rejected it) is dead-lettered to
// `dead_letter_queue` through the default exchange instead of being delivered again.
struct QueueSpec {
  QueueSpec() = default;
  explicit QueueSpec(std::string name, int delivery_limit = 0, std::string dead_letter_queue = {})
      : name(std::move(name)),
        delivery_limit(delivery_limit),
        dead_letter_queue(std::move(dead_letter_queue)) {}

  std::string name;
  int delivery_limit = 0;  // 0: none
  std::string dead_letter_queue;
};

// A delivery's tag within its connection epoch (see above).
struct DeliveryTag {
  uint64_t epoch = 0;
  uint64_t tag = 0;
};

struct Delivery {
  std::string queue;
  std::string body;
  DeliveryTag tag;
  bool redelivered = false;
  int64_t delivery_count = 0;  // earlier deliveries (x-delivery-count): 0 on the first
};

enum class PublishOutcome {
  kConfirmed,   // the broker has it (on disk for a persistent message)
  kNacked,      // the broker refused it (basic.nack)
  kUnroutable,  // no such queue (returned: published as mandatory)
  kClosed,      // the client closed before the broker answered
};

class AmqpClient {
 public:
  // Connects, waiting up to `first_connect_timeout` (AmqpError naming the redacted URL if the
  // broker cannot be reached or refuses the login); later losses are reconnected forever.
  explicit AmqpClient(AmqpUrl url, AmqpOptions options = {});
  ~AmqpClient();  // Close()
  AmqpClient(const AmqpClient&) = delete;
  AmqpClient& operator=(const AmqpClient&) = delete;

  // Declares the queue (idempotent; again after each reconnection). AmqpError when the broker
  // refuses it (an existing queue of that name with other arguments).
  void Declare(const QueueSpec& spec);

  // Publishes to `queue` through the default exchange; the future is set when the broker
  // answers. Many in flight are confirmed together: the way to throughput.
  std::future<PublishOutcome> PublishAsync(std::string queue, std::string body,
                                           bool persistent = true);
  // Publishes persistently, and acknowledges the delivery `ack` on the I/O thread as soon as the
  // broker confirms the message (or returns it unroutable); not when it refuses it, nor when
  // `ack`'s connection is gone (the broker requeued that delivery). A worker's result and its
  // job's ack thus follow each other without a hop through the caller's threads; the future
  // still says how the publish ended.
  std::future<PublishOutcome> PublishThenAck(std::string queue, std::string body,
                                             const DeliveryTag& ack);
  // Returns once the broker confirmed it; AmqpError otherwise.
  void Publish(std::string queue, std::string body, bool persistent = true);

  // Starts consuming `queue` (declared already), at most `prefetch` unacknowledged deliveries
  // at a time for this consumer. AmqpError if the broker refuses.
  void Consume(const std::string& queue, int prefetch);
  // The next delivery of any consumed queue, or nothing after `timeout`, after StopConsuming()
  // once the local queue is empty, or after Close().
  std::optional<Delivery> Next(std::chrono::milliseconds timeout);
  // False for a stale tag (its connection is gone; the broker requeued the message).
  bool Ack(const DeliveryTag& tag);
  bool Reject(const DeliveryTag& tag, bool requeue);

  // Cancels every consumer and requeues the deliveries not yet taken by Next(); returns when
  // the broker confirmed the cancellation.
  void StopConsuming();
  // Sends the queued acks and rejects, closes the connection; unconfirmed publishes become
  // kClosed. Idempotent.
  void Close();

  bool Connected() const;
  int Reconnections() const;  // connections made after the first

 private:
  class Io;
  std::unique_ptr<Io> io_;
};

std::string_view PublishOutcomeName(PublishOutcome outcome);

// Declare, and with `prefetch` > 0 Consume, tried again with back-off for up to about ten seconds
// when refused: RabbitMQ may refuse a quorum queue that another client declares at the same
// moment (541 INTERNAL_ERROR) and then declares it fine. The last refusal is thrown.
void DeclareSettled(AmqpClient& client, const QueueSpec& spec, int prefetch = 0);

}  // namespace kf
