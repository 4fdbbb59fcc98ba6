// The AMQP transport's throughput through a broker: one publisher sends N small messages (a run
// reply in the core codec's JSON, ~190 bytes) with publisher confirms, at most WINDOW
// unconfirmed at a time (1: each publish waits for its confirm), while C consumers, each on its
// own connection as separate workers would be, take them with manual acks at PREFETCH. Reports,
// for each C, messages/s from the first publish to the last ack, and the publisher's own rate
// (to the last confirm). Each run uses a fresh quorum queue, deleted by nobody (the broker is the
// bench script's own).
//
//   kf_amqp_throughput URL [--messages N] [--consumers 1,2,4,8] [--prefetch P] [--window W]

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <future>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/codec.hpp"
#include "dist/amqp_client.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string url;
  int messages = 20000;
  std::vector<int> consumers = {1, 2, 4, 8};
  int prefetch = 2;
  int window = 1000;
};

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--messages") {
      o.messages = std::stoi(value());
    } else if (a == "--consumers") {
      o.consumers.clear();
      std::stringstream list(value());
      for (std::string n; std::getline(list, n, ',');) o.consumers.push_back(std::stoi(n));
    } else if (a == "--prefetch") {
      o.prefetch = std::stoi(value());
    } else if (a == "--window") {
      o.window = std::stoi(value());
    } else {
      o.url = a;
    }
  }
  if (o.url.empty()) throw std::invalid_argument("usage: kf_amqp_throughput URL [options]");
  return o;
}

std::string Body(int i) {
  kf::RunReply r;
  r.key = fmt::format("e{:016x}", i);
  r.evaluation.status = kf::Status::kOk;
  r.runner = i % 8;
  return kf::RunReplyToJson(r).dump();
}

struct Figures {
  double total_s = 0, publish_s = 0;
};

Figures RunOnce(const Options& o, int consumers) {
  const kf::AmqpUrl url = kf::ParseAmqpUrl(o.url);
  const std::string queue =
      fmt::format("kf.bench.c{}.p{}.w{}.{}", consumers, o.prefetch, o.window, getpid());
  kf::AmqpClient publisher(url);
  publisher.Declare(kf::QueueSpec(queue));
  std::vector<std::string> bodies;
  for (int i = 0; i < o.messages; ++i) bodies.push_back(Body(i));

  std::atomic<int> received{0};
  std::vector<std::unique_ptr<kf::AmqpClient>> workers;
  for (int c = 0; c < consumers; ++c) {
    workers.push_back(std::make_unique<kf::AmqpClient>(url));
    workers.back()->Consume(queue, o.prefetch);
  }
  std::vector<std::thread> threads;
  for (auto& w : workers) {
    threads.emplace_back([&, client = w.get()] {
      while (received.load() < o.messages) {
        if (std::optional<kf::Delivery> d = client->Next(std::chrono::milliseconds(50))) {
          client->Ack(d->tag);
          ++received;
        }
      }
    });
  }

  const Clock::time_point start = Clock::now();
  std::deque<std::future<kf::PublishOutcome>> in_flight;
  for (int i = 0; i < o.messages; ++i) {
    in_flight.push_back(publisher.PublishAsync(queue, bodies[i]));
    while (static_cast<int>(in_flight.size()) >= o.window) {
      if (in_flight.front().get() != kf::PublishOutcome::kConfirmed) {
        throw std::runtime_error("a publish was not confirmed");
      }
      in_flight.pop_front();
    }
  }
  for (auto& f : in_flight) {
    if (f.get() != kf::PublishOutcome::kConfirmed) {
      throw std::runtime_error("a publish was not confirmed");
    }
  }
  const Clock::time_point published = Clock::now();
  for (std::thread& t : threads) t.join();
  const Clock::time_point done = Clock::now();
  return {std::chrono::duration<double>(done - start).count(),
          std::chrono::duration<double>(published - start).count()};
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = Parse(argc, argv);
    fmt::print("{} messages of {} bytes, prefetch {}, confirm window {}\n", o.messages,
               Body(0).size(), o.prefetch, o.window);
    fmt::print("{:>9}  {:>12}  {:>14}\n", "consumers", "messages/s", "published/s");
    for (int c : o.consumers) {
      const Figures f = RunOnce(o, c);
      fmt::print("{:>9}  {:>12.0f}  {:>14.0f}\n", c, o.messages / f.total_s,
                 o.messages / f.publish_s);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "kf_amqp_throughput: {}\n", e.what());
    return 1;
  }
  return 0;
}
