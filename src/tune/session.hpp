#pragma once
// The bookkeeping every strategy shares: the budget (evaluations and seconds), the cache (no point
// is measured twice; a repeat is answered free), the trace of every measurement in order, and the
// best so far. Strategies only choose points.

#include <chrono>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tune/objective.hpp"
#include "tune/space.hpp"

namespace kf {

struct TuneBudget {
  int evaluations = 100;
  double seconds = 0;  // 0 = no time limit
};

struct TraceEntry {
  Point point;
  Measurement result;
};

class TuningSession {
 public:
  TuningSession(const SearchSpace& space, Objective& objective, TuneBudget budget);

  // Measures `p` (or answers from the cache without charging the budget). nullopt once the budget
  // is spent or every point of the space is measured.
  std::optional<Measurement> Evaluate(const Point& p);
  bool Done() const;
  bool Seen(const Point& p) const { return cache_.count(p) > 0; }
  const Measurement* Cached(const Point& p) const;

  const SearchSpace& space() const { return space_; }
  const std::vector<TraceEntry>& trace() const { return trace_; }
  const TraceEntry* best() const {
    return best_ < 0 ? nullptr : &trace_[static_cast<size_t>(best_)];
  }
  int evaluations() const { return static_cast<int>(trace_.size()); }
  int remaining() const { return budget_.evaluations - evaluations(); }
  // An unmeasured valid point drawn uniformly (by rejection, then by scanning); {} if none is left.
  Point SampleUnseen(std::mt19937_64& rng) const;

 private:
  const SearchSpace& space_;
  Objective& objective_;
  TuneBudget budget_;
  std::chrono::steady_clock::time_point start_;
  std::map<Point, Measurement> cache_;
  std::vector<TraceEntry> trace_;
  int best_ = -1;
};

}  // namespace kf
