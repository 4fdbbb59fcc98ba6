// Simulated annealing over one-parameter moves: a worse neighbour is accepted with probability
// exp(-relative loss / temperature), the temperature decays geometrically, and a walk with no
// unmeasured neighbour left restarts from an unseen random point. Failing points are never
// accepted as the current point. A walk is sequential: each step needs the last one's result, so
// at most one of its points is in flight and Ask gives nothing until it is told.
#include <algorithm>
#include <cmath>
#include <optional>

#include "tune/strategies/strategies.hpp"

namespace kf {

namespace {

class AnnealingStrategy : public TuningStrategy {
 public:
  std::vector<Point> Ask(TuningSession& s, int) override {
    if (waiting_) return {};
    std::mt19937_64& rng = s.rng();
    while (true) {
      if (current_.empty()) {
        Point p = s.SampleUnseen(rng);
        if (p.empty()) return {};
        restarting_ = true;
        waiting_ = p;
        return {p};
      }
      std::vector<Point> options;
      for (Point& n : s.space().Neighbours(current_, false)) {
        if (!s.Seen(n)) options.push_back(std::move(n));
      }
      if (options.empty()) {  // a local minimum whose neighbourhood is measured: restart
        current_.clear();
        temperature_ = kStart;
        continue;
      }
      restarting_ = false;
      waiting_ = options[std::uniform_int_distribution<size_t>(0, options.size() - 1)(rng)];
      return {*waiting_};
    }
  }

  void Tell(TuningSession& s, const Point& p, const Measurement& m) override {
    if (!waiting_ || p != *waiting_) return;  // a starting point's or a resumed run's result
    waiting_.reset();
    if (restarting_) {
      if (m.ok) Move(p, m.time_ms);
      return;
    }
    if (m.ok) {
      double loss = (m.time_ms - current_time_) / current_time_;
      std::uniform_real_distribution<double> unit(0, 1);
      if (loss < 0 || unit(s.rng()) < std::exp(-loss / temperature_)) Move(p, m.time_ms);
    }
    temperature_ = std::max(kFloor, temperature_ * kCooling);
  }

 private:
  void Move(const Point& p, double time_ms) {
    current_ = p;
    current_time_ = time_ms;
  }

  static constexpr double kStart = 0.2, kCooling = 0.95, kFloor = 1e-3;
  double temperature_ = kStart;
  Point current_;  // empty: restart from a random point
  double current_time_ = 0;
  std::optional<Point> waiting_;  // the point in flight
  bool restarting_ = false;       // whether it is a restart (else a move from current_)
};

}  // namespace

std::unique_ptr<TuningStrategy> MakeAnnealingStrategy() {
  return std::make_unique<AnnealingStrategy>();
}

}  // namespace kf
