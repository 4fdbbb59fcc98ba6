#pragma once
// Search strategies: each is one function with the same signature, choosing points for a
// TuningSession until it is done. Deterministic for a given seed.

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tune/session.hpp"

namespace kf {

using Strategy = std::function<void(TuningSession& session, std::mt19937_64& rng)>;

void ExhaustiveSearch(TuningSession& s, std::mt19937_64& rng);
void RandomSearch(TuningSession& s, std::mt19937_64& rng);
void GeneticSearch(TuningSession& s, std::mt19937_64& rng);
void AnnealingSearch(TuningSession& s, std::mt19937_64& rng);
void ModelSearch(TuningSession& s,
                 std::mt19937_64& rng);  // random-forest surrogate, expected improvement

// "exhaustive", "random", "genetic", "annealing", "model"; empty function for an unknown name.
Strategy StrategyByName(const std::string& name);
std::vector<std::string> StrategyNames();
inline constexpr const char* kDefaultStrategy = "model";

}  // namespace kf
