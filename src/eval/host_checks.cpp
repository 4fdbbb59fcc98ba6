// The host path of the evaluator: inputs drawn on the host, uploaded, outputs read back and
// compared on the host. Kept as a debug mode (`--check-on host`) and as the oracle the device path
// is tested against.
#include <fmt/format.h>

#include "eval/compare.hpp"
#include "eval/evaluator.hpp"
#include "eval/verdict.hpp"
#include "eval/workspace.hpp"

namespace kf {

namespace {

// The verdict on the outputs of one launch; their figures merged into `total` if given.
Verdict HostVerdict(const Task& task, const std::vector<HostBuffer>& ref,
                    const std::vector<HostBuffer>& out, const Tolerance& tolerance,
                    const std::string& where, Figures* total) {
  Verdict verdict;
  for (size_t i = 0; i < task.args.size(); ++i) {
    const ArgSpec& a = task.args[i];
    if (!a.is_buffer || a.role == ArgRole::kIn) continue;
    Figures f = CompareOutput(ref[i], out[i], PoisonPattern(a.dtype), tolerance);
    if (total) total->Merge(f);
    if (verdict) continue;
    verdict = VerdictFrom(a, f, tolerance, where, [&](bool reference) {
      size_t k = static_cast<size_t>(std::max<int64_t>(f.first_bad, 0));
      return LoadElement((reference ? ref[i] : out[i]).bytes.data(), a.dtype, k);
    });
  }
  return verdict;
}

}  // namespace

bool Evaluator::CheckOnHost(const Kernel& kernel, const Config& config, const LoadedKernels& loaded,
                            const EvalSettings& settings, Evaluation& ev) {
  const DeviceInfo& info = device_.info();
  if (!kernel.scratch.empty()) {
    return Fail(ev, Status::kInvalidConfig,
                "checking on the host passes no @scratch buffers; check it on the device "
                "(--check-on device)");
  }
  // Check: every check size set, fresh seeds each time, outputs poisoned, inputs checksummed.
  Figures figures;
  for (const SizeSet& set : task_.check_sizes) {
    // One set of buffers per size set, refilled with fresh inputs for every seed: a kernel that
    // keeps its result between launches (keyed on its buffers, or in device globals) returns
    // the previous inputs' answer.
    Workspace ws;
    const Tolerance tolerance = task_.tolerance.At(set.sizes);
    std::vector<HostBuffer> previous_ref;
    for (int s = 0; s < settings.check_seeds; ++s) {
      uint64_t seed = FreshSeed();
      ev.check_seeds.push_back(seed);
      At("check", set.name, seed);
      const std::string where = Where(), launch_where = where + ", candidate launch";
      if (s == 0) {
        ws = MakeWorkspace(device_, task_, set.sizes, seed);
      } else {
        RefillInputs(task_, ws, seed);
      }
      const std::vector<LaunchStep> ref_steps =
          MakeSteps(reference_->kernel, reference_->loaded, reference_->config, ws.env);
      PrepareLaunch(device_, task_, ws, true);
      Phase(EvalPhase::kHost, 1, "reference");
      LaunchResult r = device_.Run(ref_steps, ws.args);
      Phase(EvalPhase::kHost);
      if (!r.status.ok())
        throw ToolError("the task's reference kernel failed: " + r.status.message());
      std::vector<HostBuffer> ref = ReadOutputs(device_, task_, ws);

      std::vector<LaunchStep> steps;
      try {
        steps = MakeSteps(kernel, loaded, config, ws.env);
      } catch (const ExprError& e) {
        return Fail(ev, Status::kInvalidConfig,
                    fmt::format("launch rule ({}): {}", where, e.what()));
      }
      auto run_candidate = [&]() {
        PrepareLaunch(device_, task_, ws, true);
        CandidatePhase(static_cast<int>(steps.size()), steps);
        LaunchResult c = device_.Run(steps, ws.args);
        Phase(EvalPhase::kHost);
        return c;
      };
      LaunchResult c = run_candidate();
      if (!c.status.ok()) return LaunchFailed(ev, c.status.message(), steps, info, launch_where);
      std::vector<HostBuffer> out = ReadOutputs(device_, task_, ws);
      if (std::string input = ModifiedInput(device_, task_, ws); !input.empty()) {
        return Fail(ev, Status::kIncorrect,
                    fmt::format("the kernel modified its input '{}' ({})", input, where));
      }
      Verdict verdict = HostVerdict(task_, ref, out, tolerance, where, &figures);
      RecordFigures(figures, ev);
      if (verdict) {
        if (!previous_ref.empty() &&
            !HostVerdict(task_, previous_ref, out, tolerance, where, nullptr)) {
          return CarriedOver(ev, where);
        }
        return Fail(ev, verdict->first, verdict->second);
      }
      if (s == 0) {  // the same inputs again must give the same bits
        LaunchResult again = run_candidate();
        if (!again.status.ok())
          return LaunchFailed(ev, again.status.message(), steps, info, launch_where);
        int64_t differing = DifferingElements(task_, out, ReadOutputs(device_, task_, ws));
        if (differing > 0) {
          return Fail(ev, Status::kIncorrect,
                      fmt::format("nondeterministic: a second launch on the same inputs differs in "
                                  "{} elements (a race between work-items?) ({})",
                                  differing, where));
        }
      }
      previous_ref = std::move(ref);
    }
  }

  return true;
}

bool Evaluator::TimeOnHost(const Kernel& kernel, const Config& config, const LoadedKernels& loaded,
                           const SizeSet& bench, const EvalSettings& settings, Evaluation& ev) {
  const DeviceInfo& info = device_.info();
  // Time: interleaved with the baseline on the same inputs, cache flushed before each launch.
  uint64_t seed = FreshSeed();
  At("time", bench.name, seed);
  const std::string where = Where();
  Workspace ws = MakeWorkspace(device_, task_, bench.sizes, seed);
  const std::vector<LaunchStep> ref_steps =
      MakeSteps(reference_->kernel, reference_->loaded, reference_->config, ws.env);
  const std::vector<LaunchStep> base_steps =
      MakeSteps(baseline_->kernel, baseline_->loaded, baseline_->config, ws.env);
  const std::vector<LaunchStep> steps = MakeSteps(kernel, loaded, config, ws.env);
  PrepareLaunch(device_, task_, ws, true);
  Phase(EvalPhase::kHost, 1, "reference");
  LaunchResult r = device_.Run(ref_steps, ws.args);
  Phase(EvalPhase::kHost);
  if (!r.status.ok()) throw ToolError("the task's reference kernel failed: " + r.status.message());
  std::vector<HostBuffer> ref = ReadOutputs(device_, task_, ws);

  bool has_inout = false;
  for (const ArgSpec& a : task_.args)
    has_inout = has_inout || (a.is_buffer && a.role == ArgRole::kInOut);
  std::vector<double> cand_ms, base_ms;
  double cand_total = 0;
  for (int i = 0; i < settings.warmup_runs + settings.max_runs; ++i) {
    bool warm = i < settings.warmup_runs;
    if (has_inout) PrepareLaunch(device_, task_, ws, false);
    Must(device_.FlushCache(), "flushing the cache");
    Phase(EvalPhase::kHost, 1, "baseline");
    LaunchResult b = device_.Run(base_steps, ws.args);
    if (!b.status.ok()) throw ToolError("the task's baseline kernel failed: " + b.status.message());
    PrepareLaunch(device_, task_, ws,
                  false);  // poison, so the timed output is the candidate's own
    Must(device_.FlushCache(), "flushing the cache");
    CandidatePhase(static_cast<int>(steps.size()), steps);
    LaunchResult c = device_.Run(steps, ws.args);
    Phase(EvalPhase::kHost);
    if (!c.status.ok())
      return LaunchFailed(ev, c.status.message(), steps, info, where + ", candidate launch");
    if (warm) continue;
    base_ms.push_back(b.elapsed_ms);
    cand_ms.push_back(c.elapsed_ms);
    cand_total += c.elapsed_ms;
    if (static_cast<int>(cand_ms.size()) >= settings.min_runs &&
        cand_total >= settings.min_timed_ms)
      break;
  }
  ev.time = Summarize(cand_ms);
  ev.baseline_time = Summarize(base_ms);

  // Re-check what the timed launches produced, and that they left the inputs alone.
  std::vector<HostBuffer> out = ReadOutputs(device_, task_, ws);
  if (std::string input = ModifiedInput(device_, task_, ws); !input.empty()) {
    return Fail(ev, Status::kIncorrect,
                fmt::format("the kernel modified its input '{}' ({})", input, where));
  }
  if (Verdict verdict =
          HostVerdict(task_, ref, out, task_.tolerance.At(bench.sizes), where, nullptr)) {
    return Fail(ev, verdict->first,
                "the timed launch's output differs from the reference: " + verdict->second);
  }

  return Derive(ws.env, ev);
}

}  // namespace kf
