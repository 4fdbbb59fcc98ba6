// A genetic algorithm: a population of points, tournament selection, uniform crossover and
// per-gene mutation (each gene with probability 1/genes); failing points rank last, so the
// population learns to avoid them. Children that are invalid or already measured are mutated again,
// then replaced by unseen random points.
#include <algorithm>

#include "tune/strategy.hpp"

namespace kf {

namespace {

double Fitness(const TuningSession& s, const Point& p) {
  const Measurement* m = s.Cached(p);
  return m && m->ok ? m->time_ms : 1e300;
}

}  // namespace

void GeneticSearch(TuningSession& s, std::mt19937_64& rng) {
  const size_t kPopulation = 20;
  const auto& params = s.space().params();
  std::vector<Point> population;
  for (size_t i = 0; i < kPopulation && !s.Done(); ++i) {
    Point p = s.SampleUnseen(rng);
    if (p.empty() || !s.Evaluate(p)) return;
    population.push_back(p);
  }
  std::uniform_real_distribution<double> unit(0, 1);
  auto tournament = [&]() -> const Point& {
    const Point& a =
        population[std::uniform_int_distribution<size_t>(0, population.size() - 1)(rng)];
    const Point& b =
        population[std::uniform_int_distribution<size_t>(0, population.size() - 1)(rng)];
    return Fitness(s, a) <= Fitness(s, b) ? a : b;
  };
  const double mutation = 1.0 / static_cast<double>(params.size());
  while (!s.Done() && !population.empty()) {
    std::vector<Point> next;
    std::sort(population.begin(), population.end(),
              [&](const Point& a, const Point& b) { return Fitness(s, a) < Fitness(s, b); });
    next.push_back(population.front());  // elitism
    while (next.size() < kPopulation && !s.Done()) {
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
      for (int attempt = 0; attempt < 20 && (!s.space().IsValid(child) || s.Seen(child));
           ++attempt) {
        mutate(attempt > 5 ? 2 * mutation : mutation);
      }
      if (!s.space().IsValid(child) || s.Seen(child)) child = s.SampleUnseen(rng);
      if (child.empty() || !s.Evaluate(child)) return;
      next.push_back(child);
    }
    population = std::move(next);
  }
}

}  // namespace kf
