#include "tune/session.hpp"

namespace kf {

TuningSession::TuningSession(const SearchSpace& space, Objective& objective, TuneBudget budget)
    : space_(space),
      objective_(objective),
      budget_(budget),
      start_(std::chrono::steady_clock::now()) {}

bool TuningSession::Done() const {
  if (evaluations() >= budget_.evaluations) return true;
  if (budget_.seconds > 0 &&
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() >=
          budget_.seconds) {
    return true;
  }
  bool small = space_.product_size() <= SearchSpace::kEnumerateLimit;
  return small && cache_.size() >= space_.size();
}

const Measurement* TuningSession::Cached(const Point& p) const {
  auto it = cache_.find(p);
  return it == cache_.end() ? nullptr : &it->second;
}

std::optional<Measurement> TuningSession::Evaluate(const Point& p) {
  if (const Measurement* m = Cached(p)) return *m;
  if (Done()) return std::nullopt;
  Measurement m =
      space_.IsValid(p) ? objective_.Measure(p) : Measurement{false, 0, "InvalidConfig"};
  cache_[p] = m;
  trace_.push_back({p, m});
  if (m.ok && (best_ < 0 || m.time_ms < trace_[static_cast<size_t>(best_)].result.time_ms)) {
    best_ = static_cast<int>(trace_.size()) - 1;
  }
  return m;
}

Point TuningSession::SampleUnseen(std::mt19937_64& rng) const {
  for (int attempt = 0; attempt < 200; ++attempt) {
    Point p = space_.Sample(rng);
    if (p.empty()) return {};
    if (!Seen(p)) return p;
  }
  const auto& all = space_.points();  // nearly exhausted: scan from a random start
  if (all.empty()) return {};
  size_t start = std::uniform_int_distribution<size_t>(0, all.size() - 1)(rng);
  for (size_t i = 0; i < all.size(); ++i) {
    const Point& p = all[(start + i) % all.size()];
    if (!Seen(p)) return p;
  }
  return {};
}

}  // namespace kf
