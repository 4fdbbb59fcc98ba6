// A genetic algorithm: a population of points, tournament selection, uniform crossover and
// per-gene mutation (each gene with probability 1/genes); failing points rank last, so the
// population learns to avoid them. Children that are invalid or already seen are mutated again,
// then replaced by unseen random points. Within a generation the children depend on the last
// generation's results only, so they are handed out as fast as they are asked for; ranking the
// next generation waits until every member of this one is measured.
#include <algorithm>

#include "tune/strategies/strategies.hpp"

namespace kf {

namespace {

double Fitness(const TuningSession& s, const Point& p) {
  const Measurement* m = s.Cached(p);
  return m && m->ok ? m->time_ms : 1e300;
}

class GeneticStrategy : public TuningStrategy {
 public:
  std::vector<Point> Ask(TuningSession& s, int) override {
    if (finished_) return {};
    std::mt19937_64& rng = s.rng();
    if (population_.size() < kPopulation) {  // the first generation: unseen random points
      Point p = s.SampleUnseen(rng);
      if (p.empty()) return Finish();
      population_.push_back(p);
      return {p};
    }
    if (next_.empty()) {  // a new generation: its parents are ranked by their results
      for (const Point& p : population_) {
        if (!s.Cached(p)) return {};
      }
      std::sort(population_.begin(), population_.end(),
                [&](const Point& a, const Point& b) { return Fitness(s, a) < Fitness(s, b); });
      next_.push_back(population_.front());  // elitism
    }
    Point child = Breed(s, rng);
    if (child.empty()) return Finish();
    next_.push_back(child);
    if (next_.size() == kPopulation) {
      population_ = std::move(next_);
      next_.clear();
    }
    return {child};
  }

 private:
  std::vector<Point> Finish() {
    finished_ = true;
    return {};
  }

  // A child of two tournament winners, valid and unseen; {} when the space has no such point.
  Point Breed(const TuningSession& s, std::mt19937_64& rng) const {
    const auto& params = s.space().params();
    std::uniform_real_distribution<double> unit(0, 1);
    auto tournament = [&]() -> const Point& {
      const Point& a =
          population_[std::uniform_int_distribution<size_t>(0, population_.size() - 1)(rng)];
      const Point& b =
          population_[std::uniform_int_distribution<size_t>(0, population_.size() - 1)(rng)];
      return Fitness(s, a) <= Fitness(s, b) ? a : b;
    };
    const double mutation = 1.0 / static_cast<double>(params.size());
    const Point& mum = tournament();
    const Point& dad = tournament();
    Point child = mum;
    for (size_t g = 0; g < child.size(); ++g) {
      if (unit(rng) < 0.5) child[g] = dad[g];
    }
    auto mutate = [&](double chance) {
      for (size_t g = 0; g < child.size(); ++g) {
        if (unit(rng) < chance) {
          int n = static_cast<int>(params[g].values.size());
          child[g] = std::uniform_int_distribution<int>(0, n - 1)(rng);
        }
      }
    };
    mutate(mutation);
    for (int attempt = 0; attempt < 20 && (!s.space().IsValid(child) || s.Seen(child)); ++attempt) {
      mutate(attempt > 5 ? 2 * mutation : mutation);
    }
    if (!s.space().IsValid(child) || s.Seen(child)) child = s.SampleUnseen(rng);
    return child;
  }

  static constexpr size_t kPopulation = 20;
  std::vector<Point> population_;  // the generation being bred from (while short: the first)
  std::vector<Point> next_;        // the generation being handed out
  bool finished_ = false;
};

}  // namespace

std::unique_ptr<TuningStrategy> MakeGeneticStrategy() {
  return std::make_unique<GeneticStrategy>();
}

}  // namespace kf
