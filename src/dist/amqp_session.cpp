#include "dist/amqp_session.hpp"

#include <amqp_framing.h>
#include <amqp_tcp_socket.h>
#include <fmt/format.h>
#include <sys/time.h>

#include <vector>

namespace kf {
namespace {

constexpr amqp_channel_t kChannel = 1;
constexpr int kFrameMax = 131072;
constexpr uint16_t kConnectionForced = 320;  // the broker is shutting down: not a refusal

amqp_bytes_t Bytes(const std::string& s) {
  return amqp_bytes_t{s.size(), const_cast<char*>(s.data())};  // rabbitmq-c only reads it
}

std::string Text(amqp_bytes_t b) {
  return {static_cast<const char*>(b.bytes), b.len};
}

amqp_table_entry_t Entry(const char* key, amqp_field_value_t value) {
  return amqp_table_entry_t{amqp_cstring_bytes(key), value};
}

amqp_field_value_t StringValue(const std::string& s) {
  amqp_field_value_t v{};
  v.kind = AMQP_FIELD_KIND_UTF8;
  v.value.bytes = Bytes(s);
  return v;
}

amqp_field_value_t IntValue(int32_t i) {
  amqp_field_value_t v{};
  v.kind = AMQP_FIELD_KIND_I32;
  v.value.i32 = i;
  return v;
}

std::optional<int64_t> IntegerOf(const amqp_field_value_t& v) {
  switch (v.kind) {
    case AMQP_FIELD_KIND_I8: return v.value.i8;
    case AMQP_FIELD_KIND_U8: return v.value.u8;
    case AMQP_FIELD_KIND_I16: return v.value.i16;
    case AMQP_FIELD_KIND_U16: return v.value.u16;
    case AMQP_FIELD_KIND_I32: return v.value.i32;
    case AMQP_FIELD_KIND_U32: return v.value.u32;
    case AMQP_FIELD_KIND_I64: return v.value.i64;
    case AMQP_FIELD_KIND_U64: return static_cast<int64_t>(v.value.u64);
    default: return std::nullopt;
  }
}

// The reason in a channel.close or connection.close, and whether it is a refusal (the request
// was wrong) rather than the broker going away.
std::pair<std::string, bool> CloseReason(const amqp_method_t& m) {
  if (m.id == AMQP_CHANNEL_CLOSE_METHOD) {
    const auto* c = static_cast<const amqp_channel_close_t*>(m.decoded);
    return {fmt::format("{} {}", c->reply_code, Text(c->reply_text)), true};
  }
  if (m.id == AMQP_CONNECTION_CLOSE_METHOD) {
    const auto* c = static_cast<const amqp_connection_close_t*>(m.decoded);
    return {fmt::format("{} {}", c->reply_code, Text(c->reply_text)),
            c->reply_code != kConnectionForced};
  }
  return {fmt::format("unexpected method {:#x}", m.id), false};
}

SessionEvent Event(SessionEvent::Kind kind, uint64_t tag, bool multiple = false) {
  SessionEvent e;
  e.kind = kind;
  e.tag = tag;
  e.multiple = multiple;
  return e;
}

}  // namespace

AmqpSession::AmqpSession(const AmqpUrl& url, int heartbeat_s) : where_(url.Redacted()) {
  conn_ = amqp_new_connection();
  if (conn_ == nullptr) throw AmqpLost("out of memory for an AMQP connection");
  amqp_socket_t* socket = amqp_tcp_socket_new(conn_);
  if (socket == nullptr) throw AmqpLost("out of memory for an AMQP socket");
  timeval connect_timeout{5, 0};
  if (const int rc = amqp_socket_open_noblock(socket, url.host.c_str(), url.port, &connect_timeout);
      rc != AMQP_STATUS_OK) {
    throw AmqpLost(fmt::format("cannot reach {}: {}", where_, amqp_error_string2(rc)));
  }
  // A synchronous request (declare, consume) waits at most this long for its answer.
  timeval rpc_timeout{30, 0};
  amqp_set_rpc_timeout(conn_, &rpc_timeout);
  Check(amqp_login(conn_, url.vhost.c_str(), 0, kFrameMax, heartbeat_s, AMQP_SASL_METHOD_PLAIN,
                   url.user.c_str(), url.password.c_str()),
        "login");
  amqp_channel_open(conn_, kChannel);
  Check(amqp_get_rpc_reply(conn_), "channel.open");
  amqp_confirm_select(conn_, kChannel);
  Check(amqp_get_rpc_reply(conn_), "confirm.select");
}

AmqpSession::~AmqpSession() {
  amqp_destroy_connection(conn_);
}

void AmqpSession::CloseGracefully() noexcept {
  amqp_channel_close(conn_, kChannel, AMQP_REPLY_SUCCESS);
  amqp_connection_close(conn_, AMQP_REPLY_SUCCESS);
}

void AmqpSession::Check(amqp_rpc_reply_t reply, const std::string& what) {
  switch (reply.reply_type) {
    case AMQP_RESPONSE_NORMAL: return;
    case AMQP_RESPONSE_NONE: throw AmqpLost(fmt::format("{} on {}: no reply", what, where_));
    case AMQP_RESPONSE_LIBRARY_EXCEPTION:
      // A refused login shows as the socket closing under it (older brokers) or as this.
      if (reply.library_error == AMQP_STATUS_SOCKET_CLOSED && what == "login") {
        throw AmqpRefused(fmt::format("login to {} refused (user, password or vhost)", where_));
      }
      throw AmqpLost(
          fmt::format("{} on {}: {}", what, where_, amqp_error_string2(reply.library_error)));
    case AMQP_RESPONSE_SERVER_EXCEPTION: {
      const auto [reason, refused] = CloseReason(reply.reply);
      const std::string message = fmt::format("{} on {}: {}", what, where_, reason);
      if (refused) throw AmqpRefused(message);
      throw AmqpLost(message);
    }
  }
  throw AmqpLost(fmt::format("{} on {}: unknown reply", what, where_));
}

int AmqpSession::Fd() const {
  return amqp_get_sockfd(conn_);
}

bool AmqpSession::HasBufferedInput() const {
  return amqp_frames_enqueued(conn_) != 0 || amqp_data_in_buffer(conn_) != 0;
}

void AmqpSession::Declare(const QueueSpec& spec) {
  const std::string quorum = "quorum", empty;
  std::vector<amqp_table_entry_t> arguments = {Entry("x-queue-type", StringValue(quorum))};
  if (spec.delivery_limit > 0) {
    arguments.push_back(Entry("x-delivery-limit", IntValue(spec.delivery_limit)));
  }
  if (!spec.dead_letter_queue.empty()) {  // through the default exchange, to that queue
    arguments.push_back(Entry("x-dead-letter-exchange", StringValue(empty)));
    arguments.push_back(Entry("x-dead-letter-routing-key", StringValue(spec.dead_letter_queue)));
  }
  const amqp_table_t table{static_cast<int>(arguments.size()), arguments.data()};
  amqp_queue_declare(conn_, kChannel, Bytes(spec.name), /*passive=*/0, /*durable=*/1,
                     /*exclusive=*/0, /*auto_delete=*/0, table);
  Check(amqp_get_rpc_reply(conn_), "declare queue " + spec.name);
}

QueueState AmqpSession::Inspect(const std::string& queue) {
  const amqp_queue_declare_ok_t* ok =
      amqp_queue_declare(conn_, kChannel, Bytes(queue), /*passive=*/1, /*durable=*/0,
                         /*exclusive=*/0, /*auto_delete=*/0, amqp_empty_table);
  Check(amqp_get_rpc_reply(conn_), "inspect queue " + queue);
  return {static_cast<long long>(ok->message_count), static_cast<int>(ok->consumer_count)};
}

std::string AmqpSession::Consume(const std::string& queue, int prefetch) {
  amqp_basic_qos(conn_, kChannel, 0, static_cast<uint16_t>(prefetch), /*global=*/0);
  Check(amqp_get_rpc_reply(conn_), "basic.qos");
  const amqp_basic_consume_ok_t* ok =
      amqp_basic_consume(conn_, kChannel, Bytes(queue), amqp_empty_bytes, /*no_local=*/0,
                         /*no_ack=*/0, /*exclusive=*/0, amqp_empty_table);
  Check(amqp_get_rpc_reply(conn_), "consume " + queue);
  return Text(ok->consumer_tag);
}

void AmqpSession::Cancel(const std::string& consumer_tag) {
  amqp_basic_cancel(conn_, kChannel, Bytes(consumer_tag));
  Check(amqp_get_rpc_reply(conn_), "basic.cancel");
}

uint64_t AmqpSession::Publish(const std::string& queue, const std::string& body, bool persistent,
                              const std::string& message_id) {
  static const std::string kJson = "application/json";
  amqp_basic_properties_t props{};
  props._flags =
      AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_DELIVERY_MODE_FLAG | AMQP_BASIC_MESSAGE_ID_FLAG;
  props.content_type = Bytes(kJson);
  props.delivery_mode = persistent ? 2 : 1;
  props.message_id = Bytes(message_id);
  if (const int rc = amqp_basic_publish(conn_, kChannel, amqp_empty_bytes, Bytes(queue),
                                        /*mandatory=*/1, /*immediate=*/0, &props, Bytes(body));
      rc != AMQP_STATUS_OK) {
    throw AmqpLost(fmt::format("publish on {}: {}", where_, amqp_error_string2(rc)));
  }
  return next_seq_++;
}

void AmqpSession::Ack(uint64_t tag) {
  if (const int rc = amqp_basic_ack(conn_, kChannel, tag, 0); rc != AMQP_STATUS_OK) {
    throw AmqpLost(fmt::format("ack on {}: {}", where_, amqp_error_string2(rc)));
  }
}

void AmqpSession::Reject(uint64_t tag, bool requeue) {
  if (const int rc = amqp_basic_reject(conn_, kChannel, tag, requeue ? 1 : 0);
      rc != AMQP_STATUS_OK) {
    throw AmqpLost(fmt::format("reject on {}: {}", where_, amqp_error_string2(rc)));
  }
}

void AmqpSession::SendHeartbeat() {
  amqp_frame_t heartbeat{};
  heartbeat.frame_type = AMQP_FRAME_HEARTBEAT;
  heartbeat.channel = 0;
  if (const int rc = amqp_send_frame(conn_, &heartbeat); rc != AMQP_STATUS_OK) {
    throw AmqpLost(fmt::format("heartbeat on {}: {}", where_, amqp_error_string2(rc)));
  }
}

std::optional<SessionEvent> AmqpSession::ReadEvent() {
  while (true) {
    // Every byte of a frame is copied out as it is read, so the pools may go between frames.
    amqp_maybe_release_buffers(conn_);
    amqp_frame_t frame{};
    timeval no_wait{0, 0};
    const int rc = amqp_simple_wait_frame_noblock(conn_, &frame, &no_wait);
    if (rc == AMQP_STATUS_TIMEOUT) return std::nullopt;
    if (rc != AMQP_STATUS_OK) {
      throw AmqpLost(fmt::format("connection to {} lost: {}", where_, amqp_error_string2(rc)));
    }
    if (std::optional<SessionEvent> event = OnFrame(frame)) return event;
  }
}

std::optional<SessionEvent> AmqpSession::OnFrame(const amqp_frame_t& frame) {
  using Kind = SessionEvent::Kind;
  if (frame.frame_type == AMQP_FRAME_METHOD) {
    const amqp_method_t& m = frame.payload.method;
    switch (m.id) {
      case AMQP_BASIC_DELIVER_METHOD: {
        const auto* d = static_cast<const amqp_basic_deliver_t*>(m.decoded);
        incoming_ = Event(Kind::kDelivery, d->delivery_tag);
        incoming_->redelivered = d->redelivered != 0;
        incoming_->consumer_tag = Text(d->consumer_tag);
        have_header_ = false;
        return std::nullopt;
      }
      case AMQP_BASIC_RETURN_METHOD:
        incoming_ = Event(Kind::kReturn, 0);
        have_header_ = false;
        return std::nullopt;
      case AMQP_BASIC_ACK_METHOD: {
        const auto* a = static_cast<const amqp_basic_ack_t*>(m.decoded);
        return Event(Kind::kConfirm, a->delivery_tag, a->multiple != 0);
      }
      case AMQP_BASIC_NACK_METHOD: {
        const auto* n = static_cast<const amqp_basic_nack_t*>(m.decoded);
        return Event(Kind::kNack, n->delivery_tag, n->multiple != 0);
      }
      case AMQP_CHANNEL_CLOSE_METHOD:
      case AMQP_CONNECTION_CLOSE_METHOD: {
        const auto [reason, refused] = CloseReason(m);
        const std::string message = fmt::format("the broker at {} closed: {}", where_, reason);
        if (refused) throw AmqpRefused(message);
        throw AmqpLost(message);
      }
      default: return std::nullopt;  // basic.cancel-ok and the like, answered already
    }
  }
  if (!incoming_) return std::nullopt;
  if (frame.frame_type == AMQP_FRAME_HEADER) {
    body_size_ = frame.payload.properties.body_size;
    have_header_ = true;
    const auto* props =
        static_cast<const amqp_basic_properties_t*>(frame.payload.properties.decoded);
    if ((props->_flags & AMQP_BASIC_MESSAGE_ID_FLAG) != 0) {
      incoming_->message_id = Text(props->message_id);
    }
    if ((props->_flags & AMQP_BASIC_HEADERS_FLAG) != 0) {
      for (int i = 0; i < props->headers.num_entries; ++i) {
        const amqp_table_entry_t& e = props->headers.entries[i];
        if (Text(e.key) == "x-delivery-count") {
          incoming_->delivery_count = IntegerOf(e.value).value_or(0);
        }
      }
    }
  } else if (frame.frame_type == AMQP_FRAME_BODY && have_header_) {
    const amqp_bytes_t& part = frame.payload.body_fragment;
    incoming_->body.append(static_cast<const char*>(part.bytes), part.len);
  } else {
    return std::nullopt;
  }
  if (!have_header_ || incoming_->body.size() < body_size_) return std::nullopt;
  std::optional<SessionEvent> complete = std::move(incoming_);
  incoming_.reset();
  return complete;
}

}  // namespace kf
