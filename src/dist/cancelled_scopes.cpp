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
  }
  bool cancelled = false;
  try {
    cancelled = store_.ScopeCancelled(scope);
  } catch (const std::exception& e) {
    fmt::print(stderr, "worker {}: cannot ask the store whether {} was cancelled: {}\n", worker_id_,
               scope, e.what());
    return false;
  }
  if (!cancelled) return false;
  std::lock_guard lock(mu_);
  known_.push_back(scope);
  if (known_.size() > kRemembered) known_.pop_front();
  return true;
}

}  // namespace kf
