#pragma once
// A worker's view of the job scopes its coordinators cancelled (Store::ScopeCancelled): asked
// when a job is taken, before it is compiled or run. A scope once cancelled stays so, so the
// last few found cancelled are remembered and not asked again; one found not cancelled is asked
// again once its answer is kRecheck old (its coordinator may cancel it at any moment), so a
// worker taking hundreds of jobs a second asks the store a few times a second, not per job; a
// cancel reaches it at most kRecheck late (a job taken in between runs, its verdict dropped).

#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <string>

#include "store/store.hpp"

namespace kf {

class CancelledScopes {
 public:
  explicit CancelledScopes(Store& store, std::string worker_id)
      : store_(store), worker_id_(std::move(worker_id)) {}

  // False for "" and when the store cannot answer (the job then runs; its verdict is dropped).
  bool Cancelled(const std::string& scope);

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kRemembered = 64;
  static constexpr std::chrono::milliseconds kRecheck{100};
  Store& store_;
  std::string worker_id_;
  std::mutex mu_;
  std::deque<std::string> known_;                  // the latest found cancelled, newest last
  std::map<std::string, Clock::time_point> open_;  // found not cancelled, and when
};

}  // namespace kf
