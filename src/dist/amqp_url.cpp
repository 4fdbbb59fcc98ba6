#include "dist/amqp_url.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <stdexcept>

namespace kf {
namespace {

constexpr std::string_view kScheme = "amqp://";

std::string PercentDecode(std::string_view s, std::string_view url) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    int value = 0;
    if (i + 2 >= s.size() ||
        std::from_chars(s.data() + i + 1, s.data() + i + 3, value, 16).ptr != s.data() + i + 3) {
      throw std::invalid_argument(
          fmt::format("bad percent escape in broker URL {}", RedactAmqpUrl(url)));
    }
    out += static_cast<char>(value);
    i += 2;
  }
  return out;
}

std::string PercentEncode(std::string_view s) {
  std::string out;
  for (char c : s) {
    const bool plain =
        std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '~';
    out += plain ? std::string(1, c) : fmt::format("%{:02X}", static_cast<unsigned char>(c));
  }
  return out;
}

}  // namespace

std::string AmqpUrl::Redacted() const {
  return fmt::format("amqp://{}@{}:{}/{}", PercentEncode(user), host, port, PercentEncode(vhost));
}

std::string RedactAmqpUrl(std::string_view url) {
  const size_t start = url.starts_with(kScheme) ? kScheme.size() : 0;
  const size_t at = url.find('@', start);
  const size_t colon = url.find(':', start);
  if (at == std::string_view::npos || colon == std::string_view::npos || colon > at) {
    return std::string(url);
  }
  return fmt::format("{}***{}", url.substr(0, colon + 1), url.substr(at));
}

AmqpUrl ParseAmqpUrl(std::string_view url) {
  const auto bad = [&](std::string_view why) {
    return std::invalid_argument(fmt::format(
        "broker URL {}: {} (expected amqp://user@host:port/vhost)", RedactAmqpUrl(url), why));
  };
  if (!url.starts_with(kScheme)) throw bad("not an amqp:// URL");
  std::string_view rest = url.substr(kScheme.size());
  AmqpUrl out;
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos && slash + 1 < rest.size()) {
    out.vhost = PercentDecode(rest.substr(slash + 1), url);
  }
  bool has_password = false;
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    const std::string_view userinfo = authority.substr(0, at);
    authority = authority.substr(at + 1);
    const size_t colon = userinfo.find(':');
    out.user = PercentDecode(userinfo.substr(0, colon), url);
    if (colon != std::string_view::npos) {
      out.password = PercentDecode(userinfo.substr(colon + 1), url);
      has_password = true;
    }
  }
  if (const size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    const std::string_view port = authority.substr(colon + 1);
    if (std::from_chars(port.data(), port.data() + port.size(), out.port).ptr !=
            port.data() + port.size() ||
        out.port <= 0 || out.port > 65535) {
      throw bad("bad port");
    }
    authority = authority.substr(0, colon);
  }
  if (authority.empty()) throw bad("no host");
  out.host = std::string(authority);
  if (!has_password) {
    if (const char* env = std::getenv(kAmqpPasswordEnv)) out.password = env;
  }
  return out;
}

}  // namespace kf
