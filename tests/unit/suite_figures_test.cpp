// KernelBench's figures over a suite's rows (report/suite_figures.hpp): fast_p's denominators and
// strict inequalities, the geometric mean over the correct problems, torch.compile said
// unavailable rather than zero, and a row read from a run's final re-verification.
#include "report/suite_figures.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace kf {
namespace {

SuiteRow Row(const std::string& name, SuiteStatus status, bool torch,
             std::optional<double> eager = std::nullopt,
             std::optional<double> compile = std::nullopt) {
  SuiteRow r;
  r.problem = name;
  r.status = status;
  r.torch_reference = torch;
  r.eager_speedup = eager;
  r.compile_speedup = compile;
  if (!torch) r.compile_unavailable = "the task has no PyTorch reference";
  return r;
}

TEST(SuiteFigures, FastPAgainstEagerAndCompileOverTheirProblems) {
  std::vector<SuiteRow> rows = {
      Row("a", SuiteStatus::kCorrect, true, 1.5, 0.8),
      Row("b", SuiteStatus::kCorrect, true, 2.5, 1.2),
      Row("c", SuiteStatus::kNoCorrect, true),
      Row("d", SuiteStatus::kError, false),
      Row("e", SuiteStatus::kCorrect, false, 0.9),
  };
  rows[0].roofline_fraction = 0.5;
  rows[4].roofline_fraction = 0.2;
  SuiteFigures f = ComputeSuiteFigures(rows);
  EXPECT_EQ(f.problems, 5);
  EXPECT_EQ(f.correct, 3);
  EXPECT_DOUBLE_EQ(f.correctness_rate, 0.6);
  // Against eager: every problem is in the denominator, a failed one as not fast.
  EXPECT_EQ(f.eager.problems, 5);
  EXPECT_DOUBLE_EQ(f.eager.fast_0, 0.6);
  EXPECT_DOUBLE_EQ(f.eager.fast_1, 0.4);
  EXPECT_DOUBLE_EQ(f.eager.fast_2, 0.2);
  ASSERT_TRUE(f.eager.geomean_speedup);
  EXPECT_NEAR(*f.eager.geomean_speedup, std::cbrt(1.5 * 2.5 * 0.9), 1e-12);
  // Against torch.compile: the problems with a PyTorch reference only.
  EXPECT_EQ(f.compile.problems, 3);
  EXPECT_DOUBLE_EQ(f.compile.fast_0, 2.0 / 3);
  EXPECT_DOUBLE_EQ(f.compile.fast_1, 1.0 / 3);
  EXPECT_DOUBLE_EQ(f.compile.fast_2, 0);
  ASSERT_TRUE(f.compile.geomean_speedup);
  EXPECT_NEAR(*f.compile.geomean_speedup, std::sqrt(0.8 * 1.2), 1e-12);
  // The mean roofline fraction over the correct problems that have one.
  EXPECT_EQ(f.roofline_problems, 2);
  ASSERT_TRUE(f.mean_roofline_fraction);
  EXPECT_DOUBLE_EQ(*f.mean_roofline_fraction, 0.35);
}

TEST(SuiteFigures, FastOneIsStrictlyFaster) {
  SuiteFigures f = ComputeSuiteFigures(
      {Row("a", SuiteStatus::kCorrect, false, 1.0), Row("b", SuiteStatus::kCorrect, false, 2.0)});
  EXPECT_DOUBLE_EQ(f.eager.fast_0, 1.0);
  EXPECT_DOUBLE_EQ(f.eager.fast_1, 0.5);
  EXPECT_DOUBLE_EQ(f.eager.fast_2, 0.0);
}

TEST(SuiteFigures, TorchCompileMissingIsUnavailableNotZero) {
  std::vector<SuiteRow> rows = {Row("a", SuiteStatus::kCorrect, true, 1.5),
                                Row("b", SuiteStatus::kNoCorrect, true)};
  // Known from the correct problem's timing only: a problem with no correct kernel was never
  // timed against PyTorch, yet it must not make a denominator of one.
  rows[0].compile_unavailable = "torch.compile is not in PyTorch 1.13.0";
  SuiteFigures f = ComputeSuiteFigures(rows);
  EXPECT_EQ(f.compile.problems, 0);
  EXPECT_EQ(f.compile.unavailable, "torch.compile is not in PyTorch 1.13.0");
  nlohmann::json j = SuiteFiguresToJson(f);
  EXPECT_FALSE(j["compile"].contains("fast_1")) << j.dump();
  EXPECT_EQ(j["compile"]["unavailable"], f.compile.unavailable);
  EXPECT_NE(SuiteText(rows, f).find("vs compile  unavailable: torch.compile is not in"),
            std::string::npos)
      << SuiteText(rows, f);
  // Tasks without a PyTorch reference have no compile figure at all.
  f = ComputeSuiteFigures({Row("c", SuiteStatus::kCorrect, false, 1.1)});
  EXPECT_EQ(f.compile.problems, 0);
  EXPECT_EQ(f.compile.unavailable, "no problem has a PyTorch reference");
  EXPECT_FALSE(f.mean_roofline_fraction);
}

TEST(SuiteFigures, NoCorrectProblemHasNoGeometricMean) {
  SuiteFigures f = ComputeSuiteFigures({Row("a", SuiteStatus::kNoCorrect, true)});
  EXPECT_EQ(f.correct, 0);
  EXPECT_DOUBLE_EQ(f.eager.fast_0, 0);
  EXPECT_FALSE(f.eager.geomean_speedup);
  EXPECT_TRUE(SuiteFiguresToJson(f)["eager"]["geomean_speedup"].is_null());
}

Evaluation Verified(double speedup, double eager, std::optional<double> compile) {
  Evaluation ev;
  ev.status = Status::kOk;
  ev.speedup = speedup;
  ev.time = TimingStats{0.5, 0.4, 0.6, 10};
  ev.roofline_fraction = 0.3;
  ev.compute_fraction = 0.6;
  ev.external_baselines.push_back({"torch eager", "cpu", TimingStats{1, 1, 1, 3}, eager, ""});
  if (compile)
    ev.external_baselines.push_back({"torch.compile", "cpu", TimingStats{1, 1, 1, 3}, compile, ""});
  else
    ev.external_baselines.push_back({"torch.compile", "cpu", std::nullopt, std::nullopt, "old"});
  return ev;
}

RunSummary Summary(std::vector<Evaluation> runs) {
  RunSummary s;
  s.run.name = "suite-relu";
  s.run.task = "relu";
  FinalCheck f;
  f.elite.kernel.path = "/t/relu.cl";
  f.elite.config = {{"BLOCK", "64"}};
  f.runs = std::move(runs);
  f.verified = true;
  f.median = 1.7;
  s.finals.push_back(f);
  s.best = 0;
  s.best_run = s.finals[0].runs.size() > 1 ? 1 : 0;  // a run of the best's own
  return s;
}

TEST(SuiteFigures, ARowTakesTheMedianOverTheBestsRuns) {
  RunSummary s =
      Summary({Verified(1.6, 3.0, 1.1), Verified(1.7, 1.0, 0.9), Verified(1.8, 2.0, 1.0)});
  SuiteRow torch = SuiteRowOf(s, true);
  EXPECT_EQ(torch.status, SuiteStatus::kCorrect);
  EXPECT_EQ(torch.kernel, "relu.cl");
  EXPECT_EQ(torch.eager_baseline, "torch eager");
  ASSERT_TRUE(torch.eager_speedup && torch.compile_speedup);
  EXPECT_DOUBLE_EQ(*torch.eager_speedup, 2.0);
  EXPECT_DOUBLE_EQ(*torch.compile_speedup, 1.0);
  EXPECT_TRUE(torch.compile_unavailable.empty());
  EXPECT_DOUBLE_EQ(*torch.time_ms, 0.5);
  // The binding ceiling: compute's fraction is the larger here.
  EXPECT_DOUBLE_EQ(*torch.roofline_fraction, 0.6);
  EXPECT_EQ(torch.roofline_bound, "compute");
  // Without a PyTorch reference the baseline kernel is the "eager" column: the final median.
  SuiteRow kernel = SuiteRowOf(s, false);
  EXPECT_EQ(kernel.eager_baseline, "baseline kernel");
  EXPECT_DOUBLE_EQ(*kernel.eager_speedup, 1.7);
  EXPECT_FALSE(kernel.compile_speedup);
  // torch.compile not timed: the row says why.
  SuiteRow old = SuiteRowOf(Summary({Verified(1.6, 3.0, std::nullopt)}), true);
  EXPECT_FALSE(old.compile_speedup);
  EXPECT_EQ(old.compile_unavailable, "old");
  // Nothing verified: no correct kernel.
  RunSummary none = s;
  none.best = none.best_run = -1;
  EXPECT_EQ(SuiteRowOf(none, true).status, SuiteStatus::kNoCorrect);
}

}  // namespace
}  // namespace kf
