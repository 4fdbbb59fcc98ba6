#include "tune/strategy.hpp"

#include "tune/strategies/strategies.hpp"

namespace kf {

std::unique_ptr<TuningStrategy> MakeStrategy(const std::string& name) {
  if (name == "exhaustive") return MakeExhaustiveStrategy();
  if (name == "random") return MakeRandomStrategy();
  if (name == "genetic") return MakeGeneticStrategy();
  if (name == "annealing") return MakeAnnealingStrategy();
  if (name == "model") return MakeModelStrategy();
  return nullptr;
}

std::vector<std::string> StrategyNames() {
  return {"exhaustive", "random", "genetic", "annealing", "model"};
}

}  // namespace kf
