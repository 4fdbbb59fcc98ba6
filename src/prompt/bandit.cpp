#include "prompt/bandit.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace kf {

Bandit::Bandit(double prior_a, double prior_b)
    : prior_a_(prior_a > 0 ? prior_a : 1), prior_b_(prior_b > 0 ? prior_b : 1) {}

void Bandit::Reward(const std::string& arm, double reward) {
  if (std::isnan(reward)) reward = 0;
  reward = std::clamp(reward, 0.0, 1.0);
  Arm& a = arms_[arm];
  a.successes += reward;
  a.failures += 1 - reward;
  a.pulls += 1;
}

Bandit::Arm Bandit::Of(const std::string& arm) const {
  auto it = arms_.find(arm);
  return it == arms_.end() ? Arm{} : it->second;
}

double Bandit::Mean(const std::string& arm) const {
  Arm a = Of(arm);
  double alpha = prior_a_ + a.successes, beta = prior_b_ + a.failures;
  return alpha / (alpha + beta);
}

int Bandit::Pulls(const std::string& arm) const {
  return Of(arm).pulls;
}

std::vector<std::string> Bandit::Choose(
    const std::vector<std::string>& arms, size_t k, std::mt19937_64& rng,
    const std::function<double(const std::string&)>& weight,
    const std::function<double(const std::string&)>& penalty) const {
  struct Scored {
    double score;
    size_t order;
    const std::string* arm;
  };
  std::vector<Scored> scored;
  std::set<std::string> seen;
  for (const std::string& name : arms) {
    if (!seen.insert(name).second) continue;
    Arm a = Of(name);
    double theta = SampleBeta(prior_a_ + a.successes, prior_b_ + a.failures, rng);
    double score = theta * (weight ? weight(name) : 1.0) - (penalty ? penalty(name) : 0.0);
    if (std::isnan(score)) score = -HUGE_VAL;  // keeps the ordering strict
    scored.push_back({score, scored.size(), &name});
  }
  std::sort(scored.begin(), scored.end(), [](const Scored& x, const Scored& y) {
    return x.score != y.score ? x.score > y.score : x.order < y.order;
  });
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < k; ++i) out.push_back(*scored[i].arm);
  return out;
}

double GradeCredit(int grade) {
  return std::clamp(grade, 0, 5) / 5.0;
}

double SampleBeta(double a, double b, std::mt19937_64& rng) {
  // Fresh distributions each draw: a distribution object may cache state between calls, which
  // would make a draw depend on more than the generator's state.
  double x = std::gamma_distribution<double>(a, 1.0)(rng);
  double y = std::gamma_distribution<double>(b, 1.0)(rng);
  if (x + y <= 0) return a / (a + b);  // both underflowed (tiny shapes): the mean
  return x / (x + y);
}

}  // namespace kf
