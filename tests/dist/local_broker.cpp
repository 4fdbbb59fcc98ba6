#include "local_broker.hpp"

#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <random>
#include <stdexcept>

namespace kf::test {
namespace {

constexpr const char* kServer = "/usr/lib/rabbitmq/bin/rabbitmq-server";

bool PortFree(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool free = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return free;
}

// The script's AMQP port P, with P + 10000 (epmd) and P + 20000 (Erlang distribution) free too.
int PickPort(std::mt19937& rng) {
  std::uniform_int_distribution<int> pick(20000, 45000);
  for (int attempt = 0; attempt < 200; ++attempt) {
    const int p = pick(rng);
    if (PortFree(p) && PortFree(p + 10000) && PortFree(p + 20000)) return p;
  }
  throw std::runtime_error("no free port for the test broker");
}

}  // namespace

bool LocalBroker::Available() {
  return access(kServer, X_OK) == 0;
}

LocalBroker::LocalBroker() {
  std::random_device seed;
  std::mt19937 rng(seed());
  port_ = PickPort(rng);
  dir_ = std::filesystem::temp_directory_path() / fmt::format("kf-broker-{}-{}", getpid(), port_);
  std::filesystem::create_directories(dir_);
  setenv(kAmqpPasswordEnv, fmt::format("test-{:x}", rng()).c_str(), 1);
  Start();
}

LocalBroker::~LocalBroker() {
  try {
    Stop();
  } catch (const std::exception& e) {
    fmt::print(stderr, "stopping the test broker: {}\n", e.what());
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void LocalBroker::Script(const std::string& command) {
  const std::string log = (dir_ / "script.log").string();
  const std::string line = fmt::format("KF_RABBITMQ_PORT={} '{}' {} '{}' >'{}' 2>&1", port_,
                                       KF_SERVICES_RABBITMQ, command, dir_.string(), log);
  if (std::system(line.c_str()) != 0) {
    throw std::runtime_error(fmt::format("services-rabbitmq.sh {} failed; see {}", command, log));
  }
}

void LocalBroker::Start() {
  Script("start");
  running_ = true;
}

void LocalBroker::Stop() {
  if (!running_) return;
  running_ = false;
  Script("stop");
}

AmqpUrl LocalBroker::Url() const {
  return ParseAmqpUrl(fmt::format("amqp://kfoundry@127.0.0.1:{}/", port_));
}

}  // namespace kf::test
