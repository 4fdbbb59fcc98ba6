// Simulated annealing over one-parameter moves: a worse neighbour is accepted with probability
// exp(-relative loss / temperature), the temperature decays geometrically, and a walk with no
// unmeasured neighbour left restarts from an unseen random point. Failing points are never
// accepted as the current point.
#include <cmath>

#include "tune/strategy.hpp"

namespace kf {

void AnnealingSearch(TuningSession& s, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(0, 1);
  const double kStart = 0.2, kCooling = 0.95, kFloor = 1e-3;
  double temperature = kStart;
  Point current;
  double current_time = 0;
  while (!s.Done()) {
    if (current.empty()) {
      Point p = s.SampleUnseen(rng);
      if (p.empty()) return;
      std::optional<Measurement> m = s.Evaluate(p);
      if (!m) return;
      if (m->ok) {
        current = p;
        current_time = m->time_ms;
      }
      continue;
    }
    std::vector<Point> options;
    for (Point& n : s.space().Neighbours(current, false)) {
      if (!s.Seen(n)) options.push_back(std::move(n));
    }
    if (options.empty()) {  // a local minimum whose neighbourhood is measured: restart
      current.clear();
      temperature = kStart;
      continue;
    }
    const Point& next = options[std::uniform_int_distribution<size_t>(0, options.size() - 1)(rng)];
    std::optional<Measurement> m = s.Evaluate(next);
    if (!m) return;
    if (m->ok) {
      double loss = (m->time_ms - current_time) / current_time;
      if (loss < 0 || unit(rng) < std::exp(-loss / temperature)) {
        current = next;
        current_time = m->time_ms;
      }
    }
    temperature = std::max(kFloor, temperature * kCooling);
  }
}

}  // namespace kf
