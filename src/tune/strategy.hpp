#pragma once
// Search strategies, ask/tell: a strategy hands the session points to measure and is told the
// results, in any order, so candidates can be in flight on several devices at once. The session
// keeps the budget, the cache and the trace; a strategy only chooses. Its randomness comes from
// the session's stream alone and measurements never draw from it, so driven one point at a time
// (RunSession with batch 1) a strategy is deterministic for a seed.

#include <memory>
#include <string>
#include <vector>

#include "tune/session.hpp"

namespace kf {

class TuningStrategy {
 public:
  virtual ~TuningStrategy() = default;
  // Up to n points (valid, not seen by the session) to measure next; fewer or none when it needs
  // pending results first or has nothing left (return {} with session.pending()==0 only when it
  // is truly finished: the session then ends). The session asks again until it has n, so a
  // strategy whose next pick must see its last one as seen may give one point per call.
  virtual std::vector<Point> Ask(TuningSession& session, int n) = 0;
  // A measurement arrived (any order; possibly of a point it never asked for).
  virtual void Tell(TuningSession& /*session*/, const Point& /*p*/, const Measurement& /*m*/) {}
};

// "exhaustive", "random", "genetic", "annealing", "model"; nullptr for an unknown name.
std::unique_ptr<TuningStrategy> MakeStrategy(const std::string& name);
std::vector<std::string> StrategyNames();
inline constexpr const char* kDefaultStrategy = "model";

}  // namespace kf
