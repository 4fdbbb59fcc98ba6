// The strategy benchmark: for each recorded space, each strategy and N seeds, the
// autotuning-methodology score (0 = random search, 1 = the optimum at once; Kernel Tuner's tuned
// genetic algorithm scores 0.517 in that work) and the evaluations needed to reach 90%, 95% and
// 99% of the optimum (median over seeds; ">B" when fewer than half the seeds got there within the
// budget). Random search's expectation is computed exactly, not sampled.
//
//   kf_tuner_bench [--seeds N] [--strategies a,b,...] [--budget-factor F] SPACE.json[.gz] ...

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "tune/score.hpp"
#include "tune/strategy.hpp"

namespace {

std::string Median(std::vector<int> v, int budget) {
  for (int& x : v) x = x < 0 ? budget + 1 : x;
  std::sort(v.begin(), v.end());
  int m = v[v.size() / 2];
  return m > budget ? fmt::format(">{}", budget) : std::to_string(m);
}

double MedianValue(std::vector<int> v, int budget) {
  for (int& x : v) x = x < 0 ? budget + 1 : x;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int seeds = 20;
  double budget_factor = 2.0;
  std::vector<std::string> strategies = {"random", "genetic", "annealing", "model"};
  std::vector<std::string> spaces;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--seeds" && i + 1 < argc) {
      seeds = std::atoi(argv[++i]);
    } else if (a == "--budget-factor" && i + 1 < argc) {
      budget_factor = std::atof(argv[++i]);
    } else if (a == "--strategies" && i + 1 < argc) {
      strategies.clear();
      std::stringstream ss(argv[++i]);
      std::string s;
      while (std::getline(ss, s, ',')) strategies.push_back(s);
    } else if (a == "-h" || a == "--help") {
      fmt::print(
          "usage: kf_tuner_bench [--seeds N] [--strategies a,b] [--budget-factor F] SPACE...\n");
      return 0;
    } else {
      spaces.push_back(a);
    }
  }
  if (spaces.empty()) {
    fmt::print(stderr, "kf_tuner_bench: give one or more recorded spaces\n");
    return 2;
  }
  fmt::print(
      "| space | configs | cutoff | budget | strategy | score | evals to 90% | 95% | 99% | "
      "random/strategy at 95% |\n");
  fmt::print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const std::string& path : spaces) {
    auto replay = kf::ReplayObjective::Load(path);
    kf::SpaceBaseline baseline(replay->records());
    int cutoff = baseline.Cutoff();
    int budget = std::min<int>(static_cast<int>(baseline.size()),
                               std::max<int>(static_cast<int>(budget_factor * cutoff), 50));
    std::string name = path.substr(path.find_last_of('/') + 1);
    double random95 = 0;
    for (const std::string& s : strategies) {
      kf::Strategy strategy = kf::StrategyByName(s);
      if (!strategy) {
        fmt::print(stderr, "unknown strategy {}\n", s);
        return 2;
      }
      std::vector<std::vector<double>> curves;
      std::vector<int> to90, to95, to99;
      for (int seed = 1; seed <= seeds; ++seed) {
        std::mt19937_64 rng(static_cast<uint64_t>(seed) * 7919);
        kf::TuningSession session(replay->space(), *replay, {budget, 0});
        strategy(session, rng);
        curves.push_back(
            kf::BestSoFar(session.trace(), std::max(budget, cutoff), baseline.worst()));
        to90.push_back(kf::EvaluationsToFraction(session.trace(), baseline.optimum(), 0.90));
        to95.push_back(kf::EvaluationsToFraction(session.trace(), baseline.optimum(), 0.95));
        to99.push_back(kf::EvaluationsToFraction(session.trace(), baseline.optimum(), 0.99));
      }
      double score = kf::MethodologyScore(baseline, curves);
      double m95 = MedianValue(to95, budget);
      if (s == "random") random95 = m95;
      fmt::print("| {} | {} | {} | {} | {} | {:.3f} | {} | {} | {} | {} |\n", name, baseline.size(),
                 cutoff, budget, s, score, Median(to90, budget), Median(to95, budget),
                 Median(to99, budget),
                 random95 > 0 && m95 <= budget ? fmt::format("{:.2f}", random95 / m95) : "-");
      std::fflush(stdout);
    }
  }
  return 0;
}
