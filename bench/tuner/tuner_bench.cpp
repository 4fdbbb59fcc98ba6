// The strategy benchmark: for each recorded space, each strategy and N seeds, the
// autotuning-methodology score (0 = random search, 1 = the optimum at once; Kernel Tuner's tuned
// genetic algorithm scores 0.517 in that work) and the evaluations needed to reach 90%, 95% and
// 99% of the optimum (median over seeds; ">B" when fewer than half the seeds got there within the
// budget). Random search's expectation and its median evaluations to each fraction are computed
// exactly, not sampled; the last column divides random search's exact median evaluations to 95%
// by the strategy's. With --rules DIR each strategy also runs on the space the rules leave (rules
// tried-first points first); the optimum and every measurement stay those of the whole recorded
// space. --batch N asks for N points at a time and measures them before telling any (as N devices
// would), and adds a column: the points an ask gave, on average (N at best; fewer where a strategy
// must see results first); 1, the default, is the sequential search. --transfer gives each
// session a prior (tune/transfer.hpp) from the other spaces given with the same parameter names,
// as the store of earlier tunings would, and --transfer-from FILE adds a source that is not
// itself run; a source counts when its op class (kernel name) and its device's vendor are the
// space's own, and a space is never one of its own sources.
//
//   kf_tuner_bench [--seeds N] [--strategies a,b,...] [--budget-factor F] [--rules DIR]
//                  [--batch N] [--transfer] [--transfer-from FILE]... SPACE...

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tune/rules.hpp"
#include "tune/score.hpp"
#include "tune/strategy.hpp"
#include "tune/transfer.hpp"

namespace {

int MedianOf(std::vector<int> v, int budget) {
  for (int& x : v) x = x < 0 ? budget + 1 : x;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string Shown(int median, int budget) {
  return median > budget ? fmt::format(">{}", budget) : std::to_string(median);
}

struct Options {
  int seeds = 20;
  double budget_factor = 1.0;
  int batch = 1;
  bool transfer = false;
  std::vector<std::string> transfer_from;
  std::vector<std::string> strategies = {"random", "genetic", "annealing", "model"};
  std::vector<std::string> spaces;
  std::string rules_dir;
};

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        fmt::print(stderr, "kf_tuner_bench: {} needs a value\n", a);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--seeds") {
      o.seeds = std::atoi(next().c_str());
    } else if (a == "--budget-factor") {
      o.budget_factor = std::atof(next().c_str());
    } else if (a == "--batch") {
      o.batch = std::max(1, std::atoi(next().c_str()));
    } else if (a == "--transfer") {
      o.transfer = true;
    } else if (a == "--transfer-from") {
      o.transfer_from.push_back(next());
    } else if (a == "--rules") {
      o.rules_dir = next();
    } else if (a == "--strategies") {
      o.strategies.clear();
      std::stringstream ss(next());
      std::string s;
      while (std::getline(ss, s, ',')) o.strategies.push_back(s);
    } else if (a == "-h" || a == "--help") {
      fmt::print(
          "usage: kf_tuner_bench [--seeds N] [--strategies a,b] [--budget-factor F] [--rules DIR] "
          "[--batch N] [--transfer] [--transfer-from FILE]... SPACE...\n");
      std::exit(0);
    } else {
      o.spaces.push_back(a);
    }
  }
  return o;
}

// Counts a session's asks under RunSession, which measures an ask's points one after another
// before asking again: an ask begins where the points of the last one are all measured, and then
// every point pending is one of it.
class AskCounter : public kf::Objective {
 public:
  AskCounter(kf::Objective& inner, const kf::TuningSession& session)
      : inner_(inner), session_(session) {}
  kf::Measurement Measure(const kf::Point& p) override {
    if (left_ == 0) {
      ++asks;
      left_ = session_.pending();
    }
    --left_;
    return inner_.Measure(p);
  }
  int asks = 0;

 private:
  kf::Objective& inner_;
  const kf::TuningSession& session_;
  int left_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Options o = Parse(argc, argv);
  if (o.spaces.empty()) {
    fmt::print(stderr, "kf_tuner_bench: give one or more recorded spaces\n");
    return 2;
  }
  std::vector<kf::Rule> rules;
  if (!o.rules_dir.empty()) rules = kf::LoadRules(o.rules_dir);
  fmt::print(
      "| space | configs | cutoff | budget | strategy | rules | score | evals to 90% | 95% | 99% | "
      "random/strategy at 95% |{}\n",
      o.batch > 1 ? " points per ask |" : "");
  fmt::print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |{}\n",
             o.batch > 1 ? " --- |" : "");
  std::vector<std::unique_ptr<kf::ReplayObjective>> replays;
  for (const std::string& path : o.spaces) replays.push_back(kf::ReplayObjective::Load(path));
  std::vector<std::string> source_paths = o.transfer_from;
  std::vector<std::unique_ptr<kf::ReplayObjective>> sources;
  for (const std::string& path : o.transfer_from)
    sources.push_back(kf::ReplayObjective::Load(path));
  if (o.transfer) {
    source_paths.insert(source_paths.end(), o.spaces.begin(), o.spaces.end());
    for (const std::string& path : o.spaces) sources.push_back(kf::ReplayObjective::Load(path));
  }
  for (size_t index = 0; index < o.spaces.size(); ++index) {
    const std::string& path = o.spaces[index];
    kf::ReplayObjective* replay = replays[index].get();
    kf::SpaceBaseline baseline(replay->records());
    int cutoff = baseline.Cutoff();
    // Random search's evaluations to 95%, exactly (its sampled row shows the seeds' noise). The
    // budget reaches at least that far, so every strategy's ratio to it can be measured.
    const int random95 = baseline.RandomMedianEvaluationsTo(0.95);
    int budget =
        std::min<int>(static_cast<int>(baseline.size()),
                      std::max({static_cast<int>(o.budget_factor * cutoff), random95, 50}));
    std::string name = path.substr(path.find_last_of('/') + 1);
    kf::RuleContext context = kf::RecordedSpaceContext(*replay, path);
    kf::RuledSpace ruled = kf::ApplyRules(rules, context, replay->space());
    kf::TransferPrior prior(replay->space());
    std::set<std::string> added;  // each file once, never the space itself
    for (size_t i = 0; i < sources.size(); ++i) {
      std::string key = std::filesystem::weakly_canonical(source_paths[i]).string();
      if (key == std::filesystem::weakly_canonical(path).string() || !added.insert(key).second)
        continue;
      // Earlier tunings of the same op class on the same vendor's devices: what wins on one
      // vendor's hardware can be among the slowest on another's.
      kf::RuleContext theirs = kf::RecordedSpaceContext(*sources[i], source_paths[i]);
      if (theirs.op_class != context.op_class || theirs.vendor != context.vendor) continue;
      prior.Add(sources[i]->space(), sources[i]->records());
    }
    std::vector<bool> variants = {false};
    if (!ruled.applied.empty()) variants.push_back(true);
    fmt::print("| {} | {} | {} | {} | random, exact | none | 0.000 | {} | {} | {} | 1.00 |{}\n",
               name, baseline.size(), cutoff, budget, baseline.RandomMedianEvaluationsTo(0.90),
               random95, baseline.RandomMedianEvaluationsTo(0.99), o.batch > 1 ? " |" : "");
    for (const std::string& s : o.strategies) {
      if (!kf::MakeStrategy(s)) {
        fmt::print(stderr, "unknown strategy {}\n", s);
        return 2;
      }
      for (bool with_rules : variants) {
        const kf::SearchSpace& space = with_rules ? ruled.space : replay->space();
        std::vector<std::vector<double>> curves;
        std::vector<int> to90, to95, to99;
        double points_per_ask = 0;
        for (int seed = 1; seed <= o.seeds; ++seed) {
          kf::TuningSession session(space, {budget, 0}, kf::MakeStrategy(s),
                                    static_cast<uint64_t>(seed) * 7919);
          if (!prior.empty() && !with_rules) session.SetPrior(&prior);
          session.MeasureFirst(
              kf::StartingPoints(space, context.defaults,
                                 with_rules ? ruled.try_first : std::vector<kf::Point>{}, budget));
          AskCounter counter(*replay, session);
          kf::RunSession(session, counter, o.batch);
          points_per_ask += session.evaluations() / std::max(1.0, 1.0 * counter.asks) / o.seeds;
          curves.push_back(
              kf::BestSoFar(session.trace(), std::max(budget, cutoff), baseline.worst()));
          to90.push_back(kf::EvaluationsToFraction(session.trace(), baseline.optimum(), 0.90));
          to95.push_back(kf::EvaluationsToFraction(session.trace(), baseline.optimum(), 0.95));
          to99.push_back(kf::EvaluationsToFraction(session.trace(), baseline.optimum(), 0.99));
        }
        int m95 = MedianOf(to95, budget);
        std::string rule_text =
            with_rules ? fmt::format("{} ({} left)", ruled.applied.size(), space.size()) : "none";
        if (!prior.empty() && !with_rules)
          rule_text += fmt::format(", prior of {}", prior.sources());
        std::string ratio = m95 <= budget
                                ? fmt::format("{:.2f}", static_cast<double>(random95) / m95)
                                : fmt::format("<{:.2f}", static_cast<double>(random95) / budget);
        fmt::print("| {} | {} | {} | {} | {} | {} | {:.3f} | {} | {} | {} | {} |{}\n", name,
                   baseline.size(), cutoff, budget, s, rule_text,
                   kf::MethodologyScore(baseline, curves), Shown(MedianOf(to90, budget), budget),
                   Shown(m95, budget), Shown(MedianOf(to99, budget), budget), ratio,
                   o.batch > 1 ? fmt::format(" {:.2f} |", points_per_ask) : "");
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
