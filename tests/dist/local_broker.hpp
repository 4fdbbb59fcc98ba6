#pragma once
// A RabbitMQ broker of the tests' own on loopback (scripts/services-rabbitmq.sh in a temporary
// folder, on free ports, with a generated password in KFOUNDRY_AMQP_PASSWORD), stopped and
// removed with the object. Available() says whether rabbitmq-server is installed at all.

#include <filesystem>
#include <string>

#include "dist/amqp_url.hpp"

namespace kf::test {

class LocalBroker {
 public:
  static bool Available();
  LocalBroker();  // starts it; throws std::runtime_error with the script's output when it fails
  ~LocalBroker();
  LocalBroker(const LocalBroker&) = delete;
  LocalBroker& operator=(const LocalBroker&) = delete;

  void Start();
  void Stop();
  AmqpUrl Url() const;  // the password is the environment's
  int port() const { return port_; }

 private:
  void Script(const std::string& command);

  std::filesystem::path dir_;
  int port_ = 0;
  bool running_ = false;
};

}  // namespace kf::test
