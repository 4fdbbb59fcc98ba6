#pragma once
// Where a broker is: `amqp://user[:password]@host[:port][/vhost]` (AMQP 0-9-1's URI form; the
// vhost percent-decoded, "/" when absent). The password belongs in the environment
// (KFOUNDRY_AMQP_PASSWORD), not on a command line where `ps` shows it; it is never printed:
// Redacted() is the form for logs and messages.

#include <string>
#include <string_view>

namespace kf {

inline constexpr const char* kAmqpPasswordEnv = "KFOUNDRY_AMQP_PASSWORD";

struct AmqpUrl {
  std::string host = "127.0.0.1";
  int port = 5672;
  std::string user = "guest";
  std::string password;
  std::string vhost = "/";

  // amqp://user@host:port/vhost, the vhost percent-encoded, never the password.
  std::string Redacted() const;
};

// The password is the URL's, else $KFOUNDRY_AMQP_PASSWORD, else empty. Throws
// std::invalid_argument naming the URL with any password in it masked.
AmqpUrl ParseAmqpUrl(std::string_view url);

// `url` with the password, if it holds one, replaced by "***": for echoing what a user typed.
std::string RedactAmqpUrl(std::string_view url);

}  // namespace kf
