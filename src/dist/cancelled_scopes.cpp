#include "dist/cancelled_scopes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

namespace kf {

bool CancelledScopes::Cancelled(const std::string& scope) {
  if (scope.empty()) return false;
  {
    std::lock_guard lock(mu_);
    if (std::find(known_.begin(), known_.end(), scope) != known_.end()) return true;
    auto open = open_.find(scope);
    if (open != open_.end() && Clock::now() - open->second < kRecheck) return false;
  }
  bool cancelled = false;
  try {
    cancelled = store_.ScopeCancelled(scope);
  } catch (const std::exception& e) {
    fmt::print(stderr, "worker {}: cannot ask the store whether {} was cancelled: {}\n", worker_id_,
               scope, e.what());
    return false;
  }
  std::lock_guard lock(mu_);
  if (!cancelled) {
    if (open_.size() >= kRemembered && !open_.count(scope)) open_.clear();  // old runs' scopes
    open_[scope] = Clock::now();
    return false;
  }
  open_.erase(scope);
  known_.push_back(scope);
  if (known_.size() > kRemembered) known_.pop_front();
  return true;
}

}  // namespace kf
