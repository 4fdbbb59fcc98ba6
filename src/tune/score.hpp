#pragma once
// Scoring strategies on a recorded space, after the autotuning-methodology work: at each budget
// point n, score(n) = (random(n) - strategy(n)) / (random(n) - optimum), where random(n) is random
// search's expected best after n draws without replacement, computed exactly from the recorded
// times, and strategy(n) is the strategy's mean best-so-far over seeds; averaged over n = 1 until
// random search is expected within 5% of the optimum. 0 = random search, 1 = the optimum at once.
// Failed configurations count as the slowest valid time.

#include <vector>

#include "tune/objective.hpp"
#include "tune/session.hpp"

namespace kf {

class SpaceBaseline {
 public:
  explicit SpaceBaseline(const std::map<Point, Measurement>& records);
  double optimum() const { return sorted_.front(); }
  double worst() const { return sorted_.back(); }
  size_t size() const { return sorted_.size(); }
  double ExpectedRandomBest(int n) const;
  // The smallest n at which random search is expected within `within` of the optimum.
  int Cutoff(double within = 0.05) const;
  // Random search's evaluations until a time within `fraction` of the optimum (time <= optimum /
  // fraction), exactly: the median (the smallest n by which at least half of all draw orders have
  // one) and the mean, (N + 1) / (K + 1) for K such configurations among N.
  int RandomMedianEvaluationsTo(double fraction) const;
  double RandomMeanEvaluationsTo(double fraction) const;

 private:
  size_t CountWithin(double fraction) const;

  std::vector<double> sorted_;
};

// Best time after each of the first `budget` evaluations (failures and unfilled steps: `worst`).
std::vector<double> BestSoFar(const std::vector<TraceEntry>& trace, int budget, double worst);

// The score of a strategy from its best-so-far curves over seeds (each at least `cutoff` long).
double MethodologyScore(const SpaceBaseline& baseline,
                        const std::vector<std::vector<double>>& curves);

// Evaluations until a time within `fraction` of the optimum (time <= optimum / fraction); -1:
// never.
int EvaluationsToFraction(const std::vector<TraceEntry>& trace, double optimum, double fraction);

}  // namespace kf
