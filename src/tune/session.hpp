#pragma once
// The bookkeeping every strategy shares, asked and told rather than calling an objective, so the
// points in flight can be measured anywhere and answered in any order: the budget (evaluations
// and seconds; a point is charged when handed out), the cache (no point is handed out twice, nor
// one measured or in flight), the trace of every measurement in the order told, and the best so
// far. Strategies only choose points (strategy.hpp); RunSession drives a session against a
// blocking objective.

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <set>
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

class TuningStrategy;  // strategy.hpp
class TransferPrior;   // transfer.hpp

class TuningSession {
 public:
  // `strategy` may be null: then only the points given to MeasureFirst are measured.
  TuningSession(const SearchSpace& space, TuneBudget budget,
                std::unique_ptr<TuningStrategy> strategy, uint64_t seed);
  ~TuningSession();
  TuningSession(const TuningSession&) = delete;
  TuningSession& operator=(const TuningSession&) = delete;

  // Points handed out (in this order) before the strategy is asked for any (the template's
  // default and the rules' tried-first points). Invalid or already seen ones are skipped.
  void MeasureFirst(const std::vector<Point>& points);
  // Up to n points to measure next, each charged to the budget at once (as pending). Never a
  // point measured or pending; never an invalid one (an invalid point a strategy picks is
  // recorded at once as a failure "InvalidConfig", charged, and told to the strategy). Fewer
  // than n, even none, when the budget (evaluations or seconds) is spent, the space is exhausted,
  // or the strategy must first see pending results.
  std::vector<Point> Ask(int n);
  // A result, for a point asked for or not (a resumed run tells what its store holds). A point
  // already measured is ignored. Order is free.
  void Tell(const Point& p, const Measurement& m);
  // No point will be handed out any more and none is pending.
  bool Done() const;

  int pending() const { return static_cast<int>(pending_.size()); }
  const std::set<Point>& pending_points() const { return pending_; }
  bool Seen(const Point& p) const { return cache_.count(p) > 0 || pending_.count(p) > 0; }
  const Measurement* Cached(const Point& p) const;  // measured (not pending)

  const SearchSpace& space() const { return space_; }
  const std::vector<TraceEntry>& trace() const { return trace_; }
  const TraceEntry* best() const {
    return best_ < 0 ? nullptr : &trace_[static_cast<size_t>(best_)];
  }
  int evaluations() const { return static_cast<int>(trace_.size()); }
  // The budget less what is measured and what is pending.
  int remaining() const;
  // A valid point neither measured nor pending, drawn uniformly (by rejection, then by scanning);
  // {} if none is left.
  Point SampleUnseen(std::mt19937_64& rng) const;
  // What earlier tunings of the same kind ranked well, for the strategy to start from and learn
  // with; null: none. Owned by the caller, alive as long as the session.
  void SetPrior(const TransferPrior* prior) { prior_ = prior; }
  const TransferPrior* prior() const { return prior_; }
  // The session's stream (seeded by `seed`): the strategy's one source of randomness, so a run is
  // repeatable for a seed.
  std::mt19937_64& rng() { return rng_; }

 private:
  // Whether another point may be handed out: budget and seconds left, and (for a space small
  // enough to list) some point neither measured nor pending.
  bool CanHandOut() const;
  bool FirstPointsLeft() const;
  void Record(const Point& p, const Measurement& m);

  const SearchSpace& space_;
  TuneBudget budget_;
  std::unique_ptr<TuningStrategy> strategy_;
  std::mt19937_64 rng_;
  std::chrono::steady_clock::time_point start_;
  std::deque<Point> first_;
  bool strategy_finished_ = false;
  std::map<Point, Measurement> cache_;
  std::set<Point> pending_;
  std::vector<TraceEntry> trace_;
  int best_ = -1;
  const TransferPrior* prior_ = nullptr;
};

// Drives a session to the end against a blocking objective: Ask(batch), measure each, Tell, until
// Ask gives nothing. batch = 1 is the sequential search.
void RunSession(TuningSession& session, Objective& objective, int batch = 1);

}  // namespace kf
