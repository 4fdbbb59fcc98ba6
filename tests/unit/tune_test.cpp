#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/input_error.hpp"
#include "tune/objective.hpp"
#include "tune/score.hpp"
#include "tune/strategy.hpp"
#include "tune/transfer.hpp"

namespace kf {
namespace {

std::string Data(const std::string& f) {
  return std::string(KF_TEST_DATA) + "/spaces/" + f;
}
std::string Shared(const std::string& f) {
  return std::string(KF_SHARED_SPACES) + "/" + f;
}

SearchSpace SmallConstrained(Env env = Env()) {
  std::vector<TuneParam> params = {MakeParam("BLOCK", {"32", "64", "128", "256"}),
                                   MakeParam("VEC", {"1", "2", "4", "8"}),
                                   MakeParam("MODE", {"row", "col"})};
  return SearchSpace::FromConstraints(params,
                                      {Expr::Parse("BLOCK * VEC <= max_work_group_size"),
                                       Expr::Parse("VEC % 2 == 0 or BLOCK >= 128")},
                                      env);
}

TEST(Space, EnumeratesExactlyTheProductFilteredByTheConstraints) {
  Env env;
  env.Set("max_work_group_size", 512);
  SearchSpace s = SmallConstrained(env);
  size_t expected = 0;
  for (int b : {32, 64, 128, 256}) {
    for (int v : {1, 2, 4, 8}) {
      if (b * v <= 512 && (v % 2 == 0 || b >= 128)) expected += 2;
    }
  }
  EXPECT_EQ(s.size(), expected);
  EXPECT_EQ(s.product_size(), 32);
  std::set<Point> unique(s.points().begin(), s.points().end());
  EXPECT_EQ(unique.size(), s.size());
  for (const Point& p : s.points()) {
    EXPECT_TRUE(s.IsValid(p));
    EXPECT_EQ(s.FromConfig(s.ToConfig(p)), p);
  }
  EXPECT_FALSE(s.IsValid({3, 3, 0}));  // 256 * 8 > 512
  EXPECT_EQ(s.Key({2, 1, 1}), "128,2,col");
  EXPECT_EQ(s.ToConfig({2, 1, 1}).at("MODE"), "col");
}

TEST(Space, NeighboursChangeOneParameter) {
  Env env;
  env.Set("max_work_group_size", 4096);
  SearchSpace s = SmallConstrained(env);
  Point p = {2, 1, 0};  // 128, 2, row
  for (const Point& n : s.Neighbours(p, true)) {
    int changed = 0;
    for (size_t i = 0; i < p.size(); ++i) changed += n[i] != p[i] ? std::abs(n[i] - p[i]) : 0;
    EXPECT_EQ(changed, 1);
    EXPECT_TRUE(s.IsValid(n));
  }
  EXPECT_EQ(s.Neighbours(p, true).size(), 5u);   // BLOCK 64/256, VEC 1/4, MODE col
  EXPECT_EQ(s.Neighbours(p, false).size(), 7u);  // + BLOCK 32, VEC 8
}

TEST(Space, MillionsOfPointsAreSampledWithoutListingThem) {
  std::vector<TuneParam> params;
  for (int i = 0; i < 8; ++i) {
    params.push_back(MakeParam("P" + std::to_string(i), {"1", "2", "3", "4", "5", "6", "7", "8"}));
  }
  SearchSpace s = SearchSpace::FromConstraints(
      params, {Expr::Parse("P0 + P1 + P2 + P3 <= 20"), Expr::Parse("P7 % 2 == 0")}, Env());
  EXPECT_EQ(s.product_size(), 16777216.0);
  std::mt19937_64 rng(1);
  std::set<Point> seen;
  for (int i = 0; i < 200; ++i) {
    Point p = s.Sample(rng);
    ASSERT_TRUE(s.IsValid(p));
    seen.insert(p);
  }
  EXPECT_GT(seen.size(), 190u);
}

TEST(Replay, LoadsKernelTunerCachesPlainAndGzipped) {
  auto bowl = ReplayObjective::Load(Data("bowl.json"));
  EXPECT_EQ(bowl->space().size(), 80u);
  EXPECT_EQ(bowl->kernel_name(), "bowl");
  SpaceBaseline b(bowl->records());
  EXPECT_DOUBLE_EQ(b.optimum(), 1.0);
  auto best = bowl->space().FromConfig({{"BLOCK", "128"}, {"VEC", "4"}, {"UNROLL", "2"}});
  ASSERT_TRUE(best);
  EXPECT_DOUBLE_EQ(bowl->Measure(*best).time_ms, 1.0);

  auto ridge = ReplayObjective::Load(Data("ridge.json.gz"));
  EXPECT_EQ(ridge->space().size(), 768u);
  int failures = 0;
  for (const auto& [p, m] : ridge->records()) failures += !m.ok;
  EXPECT_GT(failures, 50);
  for (const auto& [p, m] : ridge->records()) {
    if (!m.ok) {
      EXPECT_EQ(m.failure, "RuntimeFailedConfig");
    }
  }
  EXPECT_FALSE(ridge->Measure({99, 0, 0}).ok);
}

TEST(Replay, RejectsFilesThatAreNotCaches) {
  std::string path = std::filesystem::temp_directory_path() / "kf_not_a_cache.json";
  std::ofstream(path) << "{\"hello\": 1}";
  EXPECT_THROW(ReplayObjective::Load(path), InputError);
  EXPECT_THROW(ReplayObjective::Load(path + ".missing"), InputError);
}

TEST(Replay, OurRecordingsReadBackExactly) {
  auto bowl = ReplayObjective::Load(Data("bowl.json"));
  std::string path = std::filesystem::temp_directory_path() / "kf_recording.json";
  WriteKernelTunerCache(path, bowl->space(), bowl->records(), "bowl", "synthetic");
  auto again = ReplayObjective::Load(path);
  EXPECT_EQ(again->records().size(), bowl->records().size());
  for (const auto& [p, m] : bowl->records()) {
    Config c = bowl->space().ToConfig(p);
    auto q = again->space().FromConfig(c);
    ASSERT_TRUE(q);
    EXPECT_DOUBLE_EQ(again->Measure(*q).time_ms, m.time_ms);
  }
}

TEST(T1, ConvolutionSpaceMatchesTheRecordedOneExactly) {
  if (!std::filesystem::exists(Shared("convolution_milo.T1.json")))
    GTEST_SKIP() << "no shared/tuning-spaces here";
  SearchSpace t1 = LoadT1Space(Shared("convolution_milo.T1.json"));
  auto recorded = ReplayObjective::Load(Shared("convolution_A100.json.gz"));
  ASSERT_EQ(t1.size(), recorded->space().size());
  for (const Point& p : recorded->space().points()) {
    auto q = t1.FromConfig(recorded->space().ToConfig(p));
    ASSERT_TRUE(q);
    EXPECT_TRUE(t1.IsValid(*q)) << recorded->space().Key(p);
  }
}

class Strategies : public ::testing::TestWithParam<std::string> {};

TEST_P(Strategies, DeterministicWithinBudgetAndNoRepeats) {
  auto ridge = ReplayObjective::Load(Data("ridge.json.gz"));
  auto run = [&](uint64_t seed) {
    TuningSession s(ridge->space(), {60, 0}, MakeStrategy(GetParam()), seed);
    RunSession(s, *ridge);
    return s.trace();
  };
  std::vector<TraceEntry> a = run(5), b = run(5), c = run(6);
  ASSERT_EQ(a.size(), 60u);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].point, b[i].point);
  std::set<Point> unique;
  for (const auto& e : a) unique.insert(e.point);
  EXPECT_EQ(unique.size(), a.size());
  if (GetParam() != "exhaustive") {
    bool differs = false;
    for (size_t i = 0; i < a.size(); ++i) differs = differs || a[i].point != c[i].point;
    EXPECT_TRUE(differs) << "another seed should search differently";
  }
}

TEST_P(Strategies, FindTheBowlsOptimumWithTheWholeSpaceAsBudget) {
  auto bowl = ReplayObjective::Load(Data("bowl.json"));
  TuningSession s(bowl->space(), {80, 0}, MakeStrategy(GetParam()), 3);
  RunSession(s, *bowl);
  ASSERT_NE(s.best(), nullptr);
  EXPECT_DOUBLE_EQ(s.best()->result.time_ms, 1.0);
}

INSTANTIATE_TEST_SUITE_P(All, Strategies, ::testing::ValuesIn(StrategyNames()));

TEST(Transfer, RanksConfigurationsByValueAcrossSourcesAndRefusesOtherParameters) {
  auto ridge = ReplayObjective::Load(Data("ridge.json.gz"));
  const SearchSpace& ours = ridge->space();
  // A source whose MODE list is reversed: configurations must be matched by value, not index.
  std::vector<TuneParam> params = ours.params();
  std::reverse(params[2].values.begin(), params[2].values.end());
  params[2] = MakeParam("MODE", params[2].values);
  std::vector<std::vector<int>> product;
  for (int x = 0; x < 16; ++x)
    for (int y = 0; y < 16; ++y)
      for (int m = 0; m < 3; ++m) product.push_back({x, y, m});
  SearchSpace theirs = SearchSpace::FromPoints(params, product);
  // Fastest at X=4, Y=9, MODE=2, then by distance.
  auto time = [](const Config& c) {
    double x = std::stod(c.at("X")), y = std::stod(c.at("Y")), m = std::stod(c.at("MODE"));
    return 1.0 + std::abs(x - 4) + std::abs(y - 9) + (m == 2 ? 0 : 10);
  };
  std::map<Point, Measurement> records;
  for (const Point& p : theirs.points()) records[p] = {true, time(theirs.ToConfig(p)), ""};

  TransferPrior prior(ours);
  EXPECT_TRUE(prior.empty());
  ASSERT_TRUE(prior.Add(theirs, records));
  EXPECT_EQ(prior.sources(), 1);
  std::vector<Point> best = prior.Best(3);
  ASSERT_EQ(best.size(), 3u);
  EXPECT_EQ(ours.Key(best[0]), "4,9,2");
  for (const Point& p : best) {
    // Every one of the best is in our space and ranked no worse than any other configuration.
    EXPECT_TRUE(ours.IsValid(p));
    EXPECT_EQ(ours.params()[2].values[static_cast<size_t>(p[2])], "2");
  }
  EXPECT_DOUBLE_EQ(*prior.Rank(best[0]), 0.0);
  EXPECT_LT(*prior.Rank(best[0]), *prior.Rank(best[2]));
  auto slowest = ours.FromConfig({{"X", "15"}, {"Y", "0"}, {"MODE", "0"}});
  ASSERT_TRUE(slowest);
  EXPECT_GT(*prior.Rank(*slowest), 0.9);

  // Another kernel's parameters: refused, nothing added.
  Env env;
  env.Set("max_work_group_size", 1024);
  SearchSpace other = SmallConstrained(env);
  std::map<Point, Measurement> other_records;
  for (const Point& p : other.points()) other_records[p] = {true, 1.0, ""};
  EXPECT_FALSE(prior.Add(other, other_records));
  EXPECT_EQ(prior.sources(), 1);
}

// With a prior, the model measures the configurations it ranks best before anything else, and a
// resumed session (its stored results told first) asks none of them again.
TEST(Transfer, TheModelStartsFromThePriorsBestAndResumesWithoutAskingAgain) {
  auto ridge = ReplayObjective::Load(Data("ridge.json.gz"));
  const SearchSpace& space = ridge->space();
  TransferPrior prior(space);
  ASSERT_TRUE(prior.Add(space, ridge->records()));  // a device that measured exactly the same
  std::vector<Point> best = prior.Best(4);

  TuningSession fresh(space, {40, 0}, MakeStrategy("model"), 3);
  fresh.SetPrior(&prior);
  RunSession(fresh, *ridge);
  ASSERT_GE(fresh.trace().size(), 4u);
  EXPECT_EQ(fresh.trace()[0].point, best[0]);
  SpaceBaseline baseline(ridge->records());
  EXPECT_DOUBLE_EQ(fresh.best()->result.time_ms, baseline.optimum())
      << "the prior's best is the optimum";

  // Resumed: the store holds the prior's two best and a third point; none is measured again.
  std::vector<Point> stored = {best[0], best[1], space.points()[7]};
  TuningSession resumed(space, {40, 0}, MakeStrategy("model"), 3);
  resumed.SetPrior(&prior);
  for (const Point& p : stored) resumed.Tell(p, ridge->Measure(p));
  std::vector<Point> measured;
  for (std::vector<Point> ask = resumed.Ask(1); !ask.empty(); ask = resumed.Ask(1)) {
    measured.push_back(ask[0]);
    resumed.Tell(ask[0], ridge->Measure(ask[0]));
  }
  EXPECT_EQ(resumed.evaluations(), 40);
  EXPECT_EQ(measured.size(), 37u);
  for (const Point& p : stored)
    EXPECT_EQ(std::count(measured.begin(), measured.end(), p), 0) << space.Key(p);
  ASSERT_FALSE(measured.empty());
  EXPECT_EQ(measured[0], best[2]) << "the prior's next best comes first";
}

TEST(Score, RandomSearchExpectationIsExact) {
  auto bowl = ReplayObjective::Load(Data("bowl.json"));
  SpaceBaseline b(bowl->records());
  double mean = 0;
  for (const auto& [p, m] : bowl->records()) mean += m.time_ms;
  mean /= static_cast<double>(bowl->records().size());
  EXPECT_NEAR(b.ExpectedRandomBest(1), mean, 1e-9);
  EXPECT_DOUBLE_EQ(b.ExpectedRandomBest(80), 1.0);
  for (int n = 1; n < 80; ++n)
    EXPECT_GE(b.ExpectedRandomBest(n) + 1e-12, b.ExpectedRandomBest(n + 1));
  EXPECT_LE(b.ExpectedRandomBest(b.Cutoff()), 1.05);
  EXPECT_GT(b.ExpectedRandomBest(b.Cutoff() - 1), 1.05);
}

TEST(Score, RandomSearchEvaluationsToAFractionAreExact) {
  auto ridge = ReplayObjective::Load(Data("ridge.json.gz"));
  SpaceBaseline b(ridge->records());
  const int n = static_cast<int>(b.size());
  std::vector<int> draws;
  double total = 0;
  for (uint64_t seed = 1; seed <= 2000; ++seed) {
    TuningSession s(ridge->space(), {n, 0}, MakeStrategy("random"), seed);
    RunSession(s, *ridge);
    int e = EvaluationsToFraction(s.trace(), b.optimum(), 0.95);
    ASSERT_GT(e, 0);
    draws.push_back(e);
    total += e;
  }
  std::sort(draws.begin(), draws.end());
  const double mean = b.RandomMeanEvaluationsTo(0.95);
  EXPECT_NEAR(total / static_cast<double>(draws.size()), mean, 0.1 * mean);
  const int median = b.RandomMedianEvaluationsTo(0.95);
  EXPECT_NEAR(draws[draws.size() / 2], median, 0.15 * median + 1);
  EXPECT_EQ(b.RandomMedianEvaluationsTo(1.0 / 1e9), 1);  // every configuration qualifies
}

TEST(Score, RandomScoresNearZeroAndTheOptimumAtOnceScoresOne) {
  auto ridge = ReplayObjective::Load(Data("ridge.json.gz"));
  SpaceBaseline b(ridge->records());
  int cutoff = b.Cutoff();
  std::vector<std::vector<double>> random_curves;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    TuningSession s(ridge->space(), {cutoff, 0}, MakeStrategy("random"), seed);
    RunSession(s, *ridge);
    random_curves.push_back(BestSoFar(s.trace(), cutoff, b.worst()));
  }
  EXPECT_NEAR(MethodologyScore(b, random_curves), 0.0, 0.1);
  std::vector<std::vector<double>> perfect = {
      std::vector<double>(static_cast<size_t>(cutoff), b.optimum())};
  EXPECT_NEAR(MethodologyScore(b, perfect), 1.0, 1e-9);
}

}  // namespace
}  // namespace kf
