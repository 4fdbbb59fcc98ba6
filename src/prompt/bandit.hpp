#pragma once
// Thompson sampling over named arms (prompt components, strategies) with graded rewards: each arm
// is a Beta-Bernoulli posterior that takes fractional rewards in [0, 1], so a grade of 3 of 5
// counts as 0.6 of a success. Choices are deterministic for a given generator state.

#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace kf {

class Bandit {
 public:
  // alpha = prior_a + sum(reward), beta = prior_b + sum(1 - reward).
  explicit Bandit(double prior_a = 1, double prior_b = 1);

  // `reward` is clamped to [0, 1] (NaN counts as 0).
  void Reward(const std::string& arm, double reward);

  // Draws θ ~ Beta(alpha, beta) for each distinct arm in the order given, scores it as
  // θ * weight(arm) - penalty(arm) (weight 1 and penalty 0 when not given) and returns the k best
  // arms, best first (all of them, ranked, when k >= their number). Ties keep the given order.
  std::vector<std::string> Choose(
      const std::vector<std::string>& arms, size_t k, std::mt19937_64& rng,
      const std::function<double(const std::string&)>& weight = {},
      const std::function<double(const std::string&)>& penalty = {}) const;

  double Mean(const std::string& arm) const;  // posterior mean; the prior's for an unseen arm
  int Pulls(const std::string& arm) const;    // rewards received

 private:
  struct Arm {
    double successes = 0;  // sum of rewards
    double failures = 0;   // sum of (1 - reward)
    int pulls = 0;
  };
  Arm Of(const std::string& arm) const;

  double prior_a_, prior_b_;
  std::map<std::string, Arm> arms_;
};

// The reward for a grade of 0..5 (clamped): grade / 5.
double GradeCredit(int grade);

// One draw from Beta(a, b) as X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b).
double SampleBeta(double a, double b, std::mt19937_64& rng);

}  // namespace kf
