#pragma once
// A worker's heartbeat: `beat` called at once and then every `interval` on a thread of its own,
// until the object is destroyed (which wakes it, so a worker stops without waiting an interval).

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string_view>
#include <thread>
#include <utility>

#include "store/store.hpp"

namespace kf {

// Stores a worker's heartbeat record (this process's pid filled in); a store that cannot take it
// now is said on stderr, and the next beat tries again.
inline void PutHeartbeat(Store& store, WorkerRecord w) {
  w.pid = getpid();
  try {
    store.PutWorker(w);
  } catch (const std::exception& e) {
    fmt::print(stderr, "worker {}: heartbeat not stored: {}\n", w.id, e.what());
  }
}

// A worker whose last heartbeat is older than this is taken for gone (it beats every 5 s).
inline constexpr double kLiveSeconds = 20;

inline bool LiveWorker(const WorkerRecord& w) {
  return w.state == "running" && w.heartbeat_age_s < kLiveSeconds;
}

// The live workers of a role in the store now.
inline int LiveWorkers(Store& store, std::string_view role) {
  int n = 0;
  for (const WorkerRecord& w : store.Workers()) n += w.role == role && LiveWorker(w);
  return n;
}

class HeartbeatThread {
 public:
  HeartbeatThread(std::function<void()> beat, double interval_s)
      : beat_(std::move(beat)), interval_(interval_s), thread_([this] { Loop(); }) {}
  ~HeartbeatThread() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  HeartbeatThread(const HeartbeatThread&) = delete;
  HeartbeatThread& operator=(const HeartbeatThread&) = delete;

 private:
  void Loop() {
    std::unique_lock lock(mu_);
    while (!stop_) {
      lock.unlock();
      beat_();
      lock.lock();
      cv_.wait_for(lock, interval_, [&] { return stop_; });
    }
  }

  std::function<void()> beat_;
  std::chrono::duration<double> interval_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;  // last: started once the rest is built
};

}  // namespace kf
