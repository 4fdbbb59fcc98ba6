#pragma once
// KernelBench's figures over a set of problems (`kfoundry suite`, docs/pytorch.md "The suite"):
// one row per problem read from its run, and the figures computed from the rows alone, so the
// table and the figures cannot disagree. fast_p is the share of all problems whose best kernel is
// correct and more than p times as fast as the baseline; the geometric mean and the mean roofline
// fraction are over the problems with a correct best.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "search/run_summary.hpp"

namespace kf {

enum class SuiteStatus {
  kCorrect,    // a kernel passed the final re-verification
  kNoCorrect,  // the run finished with none
  kError,      // the run could not go on (its message says why)
};
std::string_view SuiteStatusName(SuiteStatus s);

struct SuiteRow {
  std::string problem, task_dir, run;
  bool torch_reference = false;  // the task's reference is a PyTorch module
  SuiteStatus status = SuiteStatus::kNoCorrect;
  std::string message;            // for kError
  std::string kernel, config;     // the best, for kCorrect
  std::optional<double> time_ms;  // its median time at the benchmark sizes
  // Against "eager": PyTorch eager where the task has a PyTorch reference, else the task's
  // baseline kernel (`eager_baseline` names which).
  std::string eager_baseline;
  std::optional<double> eager_speedup;
  std::optional<double> compile_speedup;  // against torch.compile, where it was timed
  std::string compile_unavailable;        // why there is no torch.compile figure
  std::optional<double> roofline_fraction;
  std::string roofline_bound;           // "memory" or "compute": the ceiling the fraction is of
  int budget = 0;                       // the run's, as stored (a resumed run keeps its own)
  int evaluations = 0, judged_now = 0;  // judged_now: by this invocation (search and final)
};

// The row of a finished run; `torch_reference`: the task's reference is a PyTorch module.
SuiteRow SuiteRowOf(const RunSummary& summary, bool torch_reference);

struct FastFigures {
  int problems = 0;  // the denominator
  double fast_0 = 0, fast_1 = 0, fast_2 = 0;
  std::optional<double> geomean_speedup;  // over the correct ones with a figure
  std::string unavailable;                // why there are no figures (problems == 0)
};

struct SuiteFigures {
  int problems = 0, correct = 0;
  double correctness_rate = 0;
  FastFigures eager, compile;
  std::optional<double> mean_roofline_fraction;
  int roofline_problems = 0;  // the correct ones with a roofline fraction
};

SuiteFigures ComputeSuiteFigures(const std::vector<SuiteRow>& rows);

nlohmann::json SuiteRowToJson(const SuiteRow& row);
nlohmann::json SuiteFiguresToJson(const SuiteFigures& figures);
// The figures and the per-problem table as text.
std::string SuiteText(const std::vector<SuiteRow>& rows, const SuiteFigures& figures);

}  // namespace kf
