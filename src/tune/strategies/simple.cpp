// Exhaustive and random search: the two reference strategies.
#include <algorithm>

#include "tune/strategy.hpp"

namespace kf {

void ExhaustiveSearch(TuningSession& s, std::mt19937_64&) {
  for (const Point& p : s.space().points()) {
    if (!s.Evaluate(p)) return;
  }
}

void RandomSearch(TuningSession& s, std::mt19937_64& rng) {
  while (!s.Done()) {
    Point p = s.SampleUnseen(rng);
    if (p.empty() || !s.Evaluate(p)) return;
  }
}

Strategy StrategyByName(const std::string& name) {
  if (name == "exhaustive") return ExhaustiveSearch;
  if (name == "random") return RandomSearch;
  if (name == "genetic") return GeneticSearch;
  if (name == "annealing") return AnnealingSearch;
  if (name == "model") return ModelSearch;
  return {};
}

std::vector<std::string> StrategyNames() {
  return {"exhaustive", "random", "genetic", "annealing", "model"};
}

}  // namespace kf
