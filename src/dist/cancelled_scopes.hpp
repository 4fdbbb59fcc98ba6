#pragma once
// A worker's view of the job scopes its coordinators cancelled (Store::ScopeCancelled): asked
// when a job is taken, before it is compiled or run. A scope once cancelled stays so, so the
// last few found cancelled are remembered and not asked again; one not cancelled is asked each
// time, since its coordinator may cancel it at any moment.

#include <deque>
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
  static constexpr size_t kRemembered = 64;
  Store& store_;
  std::string worker_id_;
  std::mutex mu_;
  std::deque<std::string> known_;  // the latest found cancelled, newest last
};

}  // namespace kf
