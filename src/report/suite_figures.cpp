#include "report/suite_figures.hpp"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "core/codec.hpp"

namespace kf {

namespace {

constexpr const char* kEager = "torch eager";
constexpr const char* kCompile = "torch.compile";

const ExternalBaseline* Find(const Evaluation& ev, const std::string& name) {
  for (const ExternalBaseline& b : ev.external_baselines)
    if (b.name == name) return &b;
  return nullptr;
}

// The median over the best's re-verification runs of its speedup against an external baseline,
// as the speedup against the task's baseline is the median over the same runs.
std::optional<double> MedianExternal(const FinalCheck& best, const std::string& name) {
  std::vector<double> speedups;
  for (const Evaluation& ev : best.runs) {
    const ExternalBaseline* b = Find(ev, name);
    if (ev.status == Status::kOk && b && b->time && b->speedup) speedups.push_back(*b->speedup);
  }
  if (speedups.empty()) return std::nullopt;
  return Median(speedups);
}

// Why the run has no torch.compile time, from any of its evaluations that say.
std::string CompileUnavailable(const RunSummary& s) {
  auto why = [](const Evaluation& ev) -> std::string {
    const ExternalBaseline* b = Find(ev, kCompile);
    return b && !b->time ? b->unavailable : "";
  };
  for (const FinalCheck& f : s.finals)
    for (const Evaluation& ev : f.runs)
      if (std::string w = why(ev); !w.empty()) return w;
  for (const StoredEvaluation& e : s.evaluations)
    if (std::string w = why(e.evaluation); !w.empty()) return w;
  return "";
}

double Share(int n, int of) {
  return of > 0 ? static_cast<double>(n) / of : 0;
}

std::optional<double> GeometricMean(const std::vector<double>& xs) {
  if (xs.empty()) return std::nullopt;
  double log_sum = 0;
  for (double x : xs) log_sum += std::log(x);
  return std::exp(log_sum / static_cast<double>(xs.size()));
}

// fast_p over `rows` (the denominator), with `speedup` the figure each row is judged by.
template <typename Speedup>
FastFigures Fast(const std::vector<const SuiteRow*>& rows, Speedup speedup) {
  FastFigures f;
  f.problems = static_cast<int>(rows.size());
  int fast[3] = {0, 0, 0};
  std::vector<double> correct;
  for (const SuiteRow* r : rows) {
    if (r->status != SuiteStatus::kCorrect) continue;
    ++fast[0];  // fast_0: correct, whatever its speed
    std::optional<double> x = speedup(*r);
    if (!x) continue;
    correct.push_back(*x);
    fast[1] += *x > 1.0;
    fast[2] += *x > 2.0;
  }
  f.fast_0 = Share(fast[0], f.problems);
  f.fast_1 = Share(fast[1], f.problems);
  f.fast_2 = Share(fast[2], f.problems);
  f.geomean_speedup = GeometricMean(correct);
  return f;
}

nlohmann::json Optional(const std::optional<double>& x) {
  return x ? nlohmann::json(*x) : nlohmann::json(nullptr);
}

nlohmann::json OrNull(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

nlohmann::json FastToJson(const FastFigures& f) {
  if (f.problems == 0) return {{"problems", 0}, {"unavailable", f.unavailable}};
  return {{"problems", f.problems},
          {"fast_0", f.fast_0},
          {"fast_1", f.fast_1},
          {"fast_2", f.fast_2},
          {"geomean_speedup", Optional(f.geomean_speedup)}};
}

std::string FastText(const FastFigures& f) {
  if (f.problems == 0) return "unavailable: " + f.unavailable;
  return fmt::format("fast_0 {:.1f}%  fast_1 {:.1f}%  fast_2 {:.1f}%  of {}, geomean {}",
                     100 * f.fast_0, 100 * f.fast_1, 100 * f.fast_2, f.problems,
                     f.geomean_speedup ? fmt::format("{:.3f}x", *f.geomean_speedup) : "-");
}

std::string Times(const std::optional<double>& x) {
  return x ? fmt::format("{:.3f}x", *x) : "-";
}

}  // namespace

std::string_view SuiteStatusName(SuiteStatus s) {
  switch (s) {
    case SuiteStatus::kCorrect: return "correct";
    case SuiteStatus::kNoCorrect: return "no_correct_kernel";
    case SuiteStatus::kError: return "error";
  }
  return "error";
}

SuiteRow SuiteRowOf(const RunSummary& s, bool torch_reference) {
  SuiteRow r;
  r.problem = s.run.task;
  r.run = s.run.name;
  r.torch_reference = torch_reference;
  r.evaluations = static_cast<int>(s.evaluations.size());
  r.eager_baseline = torch_reference ? kEager : "baseline kernel";
  r.compile_unavailable =
      torch_reference ? CompileUnavailable(s) : "the task has no PyTorch reference";
  const FinalCheck* best = s.Best();
  if (!best) {
    r.status = SuiteStatus::kNoCorrect;
    return r;
  }
  r.status = SuiteStatus::kCorrect;
  const Evaluation& run = *s.BestRun();
  r.kernel = std::filesystem::path(best->elite.kernel.path).filename().string();
  r.config = ConfigToString(best->elite.config);
  if (run.time) r.time_ms = run.time->median_ms;
  r.eager_speedup = torch_reference ? MedianExternal(*best, kEager) : best->median;
  if (torch_reference) {
    r.compile_speedup = MedianExternal(*best, kCompile);
    if (r.compile_speedup) r.compile_unavailable.clear();
  }
  // The fraction of the ceiling that binds: the larger of bandwidth's and compute's.
  if (run.roofline_fraction) {
    r.roofline_fraction = run.roofline_fraction;
    r.roofline_bound = "memory";
  }
  if (run.compute_fraction &&
      (!r.roofline_fraction || *run.compute_fraction > *r.roofline_fraction)) {
    r.roofline_fraction = run.compute_fraction;
    r.roofline_bound = "compute";
  }
  return r;
}

SuiteFigures ComputeSuiteFigures(const std::vector<SuiteRow>& rows) {
  SuiteFigures f;
  f.problems = static_cast<int>(rows.size());
  std::vector<const SuiteRow*> all, compiled;
  std::string why_not_compiled;
  double roofline_sum = 0;
  bool compile_timed = false;
  for (const SuiteRow& r : rows) compile_timed = compile_timed || r.compile_speedup;
  for (const SuiteRow& r : rows) {
    all.push_back(&r);
    if (r.status == SuiteStatus::kCorrect) {
      ++f.correct;
      if (r.roofline_fraction) {
        roofline_sum += *r.roofline_fraction;
        ++f.roofline_problems;
      }
    }
    // Against torch.compile: the problems with a PyTorch reference, but for those where it is
    // known that torch.compile could not be timed (an old PyTorch, a compile that failed).
    if (r.torch_reference && (r.compile_speedup || r.compile_unavailable.empty()))
      compiled.push_back(&r);
    else if (why_not_compiled.empty() && r.torch_reference)
      why_not_compiled = r.compile_unavailable;
  }
  f.correctness_rate = Share(f.correct, f.problems);
  f.eager = Fast(all, [](const SuiteRow& r) { return r.eager_speedup; });
  // torch.compile timed nowhere and known to be missing somewhere: this PyTorch has none (or
  // none that works), and the figures would be zeros that say nothing about the kernels.
  if (!compile_timed && !why_not_compiled.empty()) compiled.clear();
  f.compile = Fast(compiled, [](const SuiteRow& r) { return r.compile_speedup; });
  if (f.compile.problems == 0)
    f.compile.unavailable =
        !why_not_compiled.empty() ? why_not_compiled : "no problem has a PyTorch reference";
  if (f.eager.problems == 0) f.eager.unavailable = "no problems";
  if (f.roofline_problems > 0) f.mean_roofline_fraction = roofline_sum / f.roofline_problems;
  return f;
}

nlohmann::json SuiteRowToJson(const SuiteRow& r) {
  nlohmann::json out = {{"problem", r.problem},
                        {"task_dir", r.task_dir},
                        {"run", r.run},
                        {"status", SuiteStatusName(r.status)},
                        {"torch_reference", r.torch_reference},
                        {"kernel", OrNull(r.kernel)},
                        {"config", OrNull(r.config)},
                        {"time_ms", Optional(r.time_ms)},
                        {"eager_baseline", r.eager_baseline},
                        {"eager_speedup", Optional(r.eager_speedup)},
                        {"compile_speedup", Optional(r.compile_speedup)},
                        {"roofline_fraction", Optional(r.roofline_fraction)},
                        {"roofline_bound", r.roofline_bound},
                        {"budget", r.budget},
                        {"evaluations", r.evaluations},
                        {"judged_now", r.judged_now}};
  if (!r.compile_unavailable.empty()) out["compile_unavailable"] = r.compile_unavailable;
  if (!r.message.empty()) out["message"] = r.message;
  return out;
}

nlohmann::json SuiteFiguresToJson(const SuiteFigures& f) {
  return {{"problems", f.problems},
          {"correct", f.correct},
          {"correctness_rate", f.correctness_rate},
          {"eager", FastToJson(f.eager)},
          {"compile", FastToJson(f.compile)},
          {"mean_roofline_fraction", Optional(f.mean_roofline_fraction)},
          {"roofline_problems", f.roofline_problems}};
}

std::string SuiteText(const std::vector<SuiteRow>& rows, const SuiteFigures& f) {
  int torch = 0;
  for (const SuiteRow& r : rows) torch += r.torch_reference;
  std::string out =
      fmt::format("problems    {}, {} with a correct kernel: correctness rate {:.1f}%\n",
                  f.problems, f.correct, 100 * f.correctness_rate);
  out += fmt::format(
      "vs eager    {} ({} against PyTorch eager, {} against the task's baseline "
      "kernel)\n",
      FastText(f.eager), torch, f.problems - torch);
  out += fmt::format("vs compile  {}\n", FastText(f.compile));
  out += fmt::format("roofline    {}\n",
                     f.mean_roofline_fraction
                         ? fmt::format("mean {:.1f}% over {} correct problems",
                                       100 * *f.mean_roofline_fraction, f.roofline_problems)
                         : std::string("-"));
  out += fmt::format("{:<28} {:<17} {:<36} {:>10} {:>9} {:>10} {:>13}\n", "problem", "status",
                     "best kernel", "time ms", "eager", "compile", "roofline");
  for (const SuiteRow& r : rows) {
    std::string kernel = r.kernel.empty() ? "-" : r.kernel + " " + r.config;
    std::string compile = r.compile_speedup                ? Times(r.compile_speedup)
                          : !r.compile_unavailable.empty() ? "n/a"
                                                           : "-";
    std::string roofline =
        r.roofline_fraction
            ? fmt::format("{:.1f}% {}", 100 * *r.roofline_fraction, r.roofline_bound)
            : "-";
    out += fmt::format("{:<28} {:<17} {:<36} {:>10} {:>9} {:>10} {:>13}\n", r.problem,
                       SuiteStatusName(r.status), kernel,
                       r.time_ms ? fmt::format("{:.4f}", *r.time_ms) : "-",
                       Times(r.eager_speedup) + (r.torch_reference ? "" : "*"), compile, roofline);
    if (!r.message.empty()) out += fmt::format("  {}: {}\n", r.problem, r.message);
  }
  if (torch < f.problems) out += "(* against the task's baseline kernel: no PyTorch reference)\n";
  std::set<std::string> reasons;  // what each n/a stands for, once
  for (const SuiteRow& r : rows)
    if (!r.compile_speedup && !r.compile_unavailable.empty() &&
        reasons.insert(r.compile_unavailable).second)
      out += fmt::format("(compile n/a: {})\n", r.compile_unavailable);
  return out;
}

}  // namespace kf
