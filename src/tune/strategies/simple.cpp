// Exhaustive and random search: the two reference strategies. Neither learns from results, so
// neither waits for any.
#include "tune/strategies/strategies.hpp"

namespace kf {

namespace {

// Every valid point in the space's order, skipping those already seen.
class ExhaustiveStrategy : public TuningStrategy {
 public:
  std::vector<Point> Ask(TuningSession& s, int n) override {
    std::vector<Point> out;
    const std::vector<Point>& all = s.space().points();
    while (next_ < all.size() && static_cast<int>(out.size()) < n) {
      const Point& p = all[next_++];
      if (!s.Seen(p)) out.push_back(p);
    }
    return out;
  }

 private:
  size_t next_ = 0;
};

// Uniform without replacement. One point per call: the next draw must see it as seen.
class RandomStrategy : public TuningStrategy {
 public:
  std::vector<Point> Ask(TuningSession& s, int) override {
    Point p = s.SampleUnseen(s.rng());
    if (p.empty()) return {};
    return {p};
  }
};

}  // namespace

std::unique_ptr<TuningStrategy> MakeExhaustiveStrategy() {
  return std::make_unique<ExhaustiveStrategy>();
}

std::unique_ptr<TuningStrategy> MakeRandomStrategy() {
  return std::make_unique<RandomStrategy>();
}

}  // namespace kf
