#include "tune/score.hpp"

#include <algorithm>

namespace kf {

SpaceBaseline::SpaceBaseline(const std::map<Point, Measurement>& records) {
  double worst = 0;
  for (const auto& [p, m] : records) {
    if (m.ok) worst = std::max(worst, m.time_ms);
  }
  for (const auto& [p, m] : records) sorted_.push_back(m.ok ? m.time_ms : worst);
  std::sort(sorted_.begin(), sorted_.end());
}

double SpaceBaseline::ExpectedRandomBest(int n) const {
  // P(every one of n draws has rank >= i) = C(N-i+1, n) / C(N, n), built up by the ratio
  // C(m-1, n) / C(m, n) = (m - n) / m.
  const double N = static_cast<double>(sorted_.size());
  if (n >= static_cast<int>(sorted_.size())) return sorted_.front();
  double expected = 0, at_least = 1.0;  // P(min rank >= i), i = 1
  for (size_t i = 1; i <= sorted_.size(); ++i) {
    double m = N - static_cast<double>(i) + 1;                // ranks i..N
    double next = m - n <= 0 ? 0.0 : at_least * (m - n) / m;  // P(min rank >= i+1)
    expected += sorted_[i - 1] * (at_least - next);
    at_least = next;
    if (at_least <= 0) break;
  }
  return expected;
}

int SpaceBaseline::Cutoff(double within) const {
  for (int n = 1; n <= static_cast<int>(sorted_.size()); ++n) {
    if (ExpectedRandomBest(n) <= optimum() * (1 + within)) return n;
  }
  return static_cast<int>(sorted_.size());
}

size_t SpaceBaseline::CountWithin(double fraction) const {
  const double limit = optimum() / fraction;
  return static_cast<size_t>(std::upper_bound(sorted_.begin(), sorted_.end(), limit) -
                             sorted_.begin());
}

int SpaceBaseline::RandomMedianEvaluationsTo(double fraction) const {
  // P(none of the first n draws is among the K) = prod_{j<n} (N - K - j) / (N - j).
  const double N = static_cast<double>(sorted_.size());
  const double K = static_cast<double>(CountWithin(fraction));
  double miss = 1.0;
  for (int n = 1; n <= static_cast<int>(sorted_.size()); ++n) {
    miss *= std::max(0.0, (N - K - (n - 1)) / (N - (n - 1)));
    if (miss <= 0.5) return n;
  }
  return static_cast<int>(sorted_.size());
}

double SpaceBaseline::RandomMeanEvaluationsTo(double fraction) const {
  return (static_cast<double>(sorted_.size()) + 1) /
         (static_cast<double>(CountWithin(fraction)) + 1);
}

std::vector<double> BestSoFar(const std::vector<TraceEntry>& trace, int budget, double worst) {
  std::vector<double> curve;
  double best = worst;
  for (int i = 0; i < budget; ++i) {
    if (i < static_cast<int>(trace.size()) && trace[static_cast<size_t>(i)].result.ok) {
      best = std::min(best, trace[static_cast<size_t>(i)].result.time_ms);
    }
    curve.push_back(best);
  }
  return curve;
}

double MethodologyScore(const SpaceBaseline& baseline,
                        const std::vector<std::vector<double>>& curves) {
  int cutoff = baseline.Cutoff();
  double total = 0;
  int points = 0;
  for (int n = 1; n <= cutoff; ++n) {
    double random = baseline.ExpectedRandomBest(n);
    double denominator = random - baseline.optimum();
    if (denominator <= 0) continue;
    double mean = 0;
    for (const auto& c : curves) mean += c[static_cast<size_t>(n - 1)];
    mean /= static_cast<double>(curves.size());
    total += (random - mean) / denominator;
    ++points;
  }
  return points ? total / points : 0.0;
}

int EvaluationsToFraction(const std::vector<TraceEntry>& trace, double optimum, double fraction) {
  for (size_t i = 0; i < trace.size(); ++i) {
    if (trace[i].result.ok && trace[i].result.time_ms <= optimum / fraction)
      return static_cast<int>(i) + 1;
  }
  return -1;
}

}  // namespace kf
