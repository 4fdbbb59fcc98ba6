#include "eval/protocol.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kf {

bool WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool SendMessage(int fd, const nlohmann::json& message) {
  return WriteAll(fd, message.dump() + "\n");
}

std::optional<nlohmann::json> MessageReader::Next() {
  char buf[65536];
  for (;;) {
    size_t newline = pending_.find('\n');
    if (newline != std::string::npos) {
      nlohmann::json m = nlohmann::json::parse(pending_.substr(0, newline), nullptr, false);
      pending_.erase(0, newline + 1);
      if (m.is_object()) return m;
      continue;
    }
    ssize_t n = read(fd_, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    pending_.append(buf, static_cast<size_t>(n));
  }
}

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

}  // namespace kf
