#include "tune/session.hpp"

#include <algorithm>

#include "tune/strategy.hpp"

namespace kf {

TuningSession::TuningSession(const SearchSpace& space, TuneBudget budget,
                             std::unique_ptr<TuningStrategy> strategy, uint64_t seed)
    : space_(space),
      budget_(budget),
      strategy_(std::move(strategy)),
      rng_(seed),
      start_(std::chrono::steady_clock::now()) {}

TuningSession::~TuningSession() = default;

void TuningSession::MeasureFirst(const std::vector<Point>& points) {
  for (const Point& p : points) {
    if (space_.IsValid(p)) first_.push_back(p);  // seen ones are skipped when their turn comes
  }
}

int TuningSession::remaining() const {
  return std::max(0, budget_.evaluations - evaluations() - pending());
}

bool TuningSession::CanHandOut() const {
  if (evaluations() + pending() >= budget_.evaluations) return false;
  if (budget_.seconds > 0 &&
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() >=
          budget_.seconds) {
    return false;
  }
  bool small = space_.product_size() <= SearchSpace::kEnumerateLimit;
  return !(small && cache_.size() + pending_.size() >= space_.size());
}

bool TuningSession::FirstPointsLeft() const {
  return std::any_of(first_.begin(), first_.end(), [&](const Point& p) { return !Seen(p); });
}

bool TuningSession::Done() const {
  if (!pending_.empty()) return false;
  if (!CanHandOut()) return true;
  return !FirstPointsLeft() && (!strategy_ || strategy_finished_);
}

std::vector<Point> TuningSession::Ask(int n) {
  std::vector<Point> out;
  while (static_cast<int>(out.size()) < n && CanHandOut()) {
    if (!first_.empty()) {
      Point p = std::move(first_.front());
      first_.pop_front();
      if (Seen(p)) continue;
      pending_.insert(p);
      out.push_back(std::move(p));
      continue;
    }
    if (!strategy_ || strategy_finished_) break;
    const int want = std::min(n - static_cast<int>(out.size()), remaining());
    std::vector<Point> picks = strategy_->Ask(*this, want);
    if (picks.empty()) {
      // With nothing in flight, nothing it could still learn would change its mind.
      strategy_finished_ = pending_.empty();
      break;
    }
    bool progressed = false;
    for (Point& p : picks) {
      if (remaining() == 0 || Seen(p)) continue;  // a strategy's slip: never measured twice
      progressed = true;
      if (!space_.IsValid(p)) {  // charged without a measurement, as a failure
        Measurement m{false, 0, "InvalidConfig"};
        Record(p, m);
        strategy_->Tell(*this, p, m);
        continue;
      }
      pending_.insert(p);
      out.push_back(std::move(p));
    }
    if (!progressed) break;
  }
  return out;
}

void TuningSession::Tell(const Point& p, const Measurement& m) {
  if (cache_.count(p)) return;
  pending_.erase(p);
  Record(p, m);
  if (strategy_) strategy_->Tell(*this, p, m);
}

void TuningSession::Record(const Point& p, const Measurement& m) {
  cache_[p] = m;
  trace_.push_back({p, m});
  if (m.ok && (best_ < 0 || m.time_ms < trace_[static_cast<size_t>(best_)].result.time_ms)) {
    best_ = static_cast<int>(trace_.size()) - 1;
  }
}

const Measurement* TuningSession::Cached(const Point& p) const {
  auto it = cache_.find(p);
  return it == cache_.end() ? nullptr : &it->second;
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

void RunSession(TuningSession& session, Objective& objective, int batch) {
  for (std::vector<Point> points = session.Ask(batch); !points.empty();
       points = session.Ask(batch)) {
    std::vector<Measurement> results;
    for (const Point& p : points) results.push_back(objective.Measure(p));
    for (size_t i = 0; i < points.size(); ++i) session.Tell(points[i], results[i]);
  }
}

}  // namespace kf
