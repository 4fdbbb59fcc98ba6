#pragma once
// The strategies' constructors, for MakeStrategy; each strategy's class stays inside its file.

#include <memory>

#include "tune/strategy.hpp"

namespace kf {

std::unique_ptr<TuningStrategy> MakeExhaustiveStrategy();
std::unique_ptr<TuningStrategy> MakeRandomStrategy();
std::unique_ptr<TuningStrategy> MakeGeneticStrategy();
std::unique_ptr<TuningStrategy> MakeAnnealingStrategy();
std::unique_ptr<TuningStrategy>
MakeModelStrategy();  // random-forest surrogate, expected improvement

}  // namespace kf
