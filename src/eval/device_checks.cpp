// The device path of the evaluator: the checks and the timing with everything on the device
// (device_workspace.hpp); the host sees figures only.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "eval/device_workspace.hpp"
#include "eval/evaluator.hpp"
#include "eval/inputs.hpp"
#include "eval/verdict.hpp"
#include "eval/workspace.hpp"

namespace kf {

struct Evaluator::Timing {
  std::vector<double> candidate, baseline;  // after the warm-up
  std::string error;                        // why a launch failed; "" when none did
  bool early = false;                       // stopped early: far slower than the time to beat
};

namespace {

constexpr int kBatch = 8;  // timed launches between two waits for the device
// Careful timing of a task with a PyTorch reference: the candidate's runs and PyTorch's in this
// many alternating rounds.
constexpr int kRounds = 4;

double MedianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Whether the median's 95% confidence interval (from order statistics, distribution-free) is
// within `target` of the median on either side.
bool MedianWithin(std::vector<double> v, double target) {
  std::sort(v.begin(), v.end());
  const double n = static_cast<double>(v.size()), half_width = 1.96 * std::sqrt(n) / 2;
  auto lo = static_cast<size_t>(std::max(0.0, std::floor(n / 2 - half_width)));
  auto hi = static_cast<size_t>(std::min(n - 1, std::ceil(n / 2 + half_width)));
  double median = MedianOf(v);
  return median > 0 && (v[hi] - v[lo]) / 2 <= target * median;
}

// Pools `more` into `runs`, baseline by name (a round's runs after the earlier rounds').
void Pool(std::vector<BaselineRuns>& runs, std::vector<BaselineRuns> more) {
  for (BaselineRuns& m : more) {
    auto same = std::find_if(runs.begin(), runs.end(),
                             [&](const BaselineRuns& r) { return r.name == m.name; });
    if (same == runs.end()) {
      runs.push_back(std::move(m));
      continue;
    }
    same->times_ms.insert(same->times_ms.end(), m.times_ms.begin(), m.times_ms.end());
    if (same->times_ms.empty() && same->unavailable.empty()) same->unavailable = m.unavailable;
  }
}

}  // namespace

std::vector<ExternalBaseline> Summarized(const std::vector<BaselineRuns>& runs) {
  std::vector<ExternalBaseline> out;
  for (const BaselineRuns& r : runs) {
    ExternalBaseline e;
    e.name = r.name;
    e.device = r.device;
    if (!r.times_ms.empty()) e.time = Summarize(r.times_ms);
    e.unavailable = r.times_ms.empty() ? r.unavailable : "";
    out.push_back(std::move(e));
  }
  return out;
}

Evaluator::Timing Evaluator::TimeInRounds(const std::vector<LaunchStep>& candidate,
                                          DeviceWorkspace& ws, bool with_baseline,
                                          const EvalSettings& s,
                                          std::vector<ExternalBaseline>* external) {
  const std::vector<HostBuffer> inputs = ws.ReadInputs();  // as drawn, before any launch
  EvalSettings part = s;
  part.min_runs = (s.min_runs + kRounds - 1) / kRounds;
  part.max_runs = std::max(1, (s.max_runs + kRounds - 1) / kRounds);
  part.min_timed_ms = s.min_timed_ms / kRounds;
  part.max_timing_ms = s.max_timing_ms / kRounds;
  Timing all;
  std::vector<BaselineRuns> runs;
  for (int round = 0; round < kRounds; ++round) {
    Timing t = TimeLaunches(&candidate, ws, with_baseline, part);
    all.candidate.insert(all.candidate.end(), t.candidate.begin(), t.candidate.end());
    all.baseline.insert(all.baseline.end(), t.baseline.begin(), t.baseline.end());
    all.error = t.error;
    all.early = t.early;
    if (!t.error.empty() || t.early) break;
    Phase(EvalPhase::kHost, 1, "baseline");
    Pool(runs, source_->TimeBaselines(ws.set(), inputs, part, FlushBytes(device_.info()), false));
    part.warmup_runs = std::min(part.warmup_runs, 1);  // both sides are warm after the first
  }
  *external = Summarized(runs);
  return all;
}

bool Evaluator::CandidateSteps(const Kernel& kernel, const Config& config,
                               const LoadedKernels& loaded, DeviceWorkspace& ws,
                               const std::string& where, Evaluation& ev,
                               std::vector<LaunchStep>* steps) {
  try {
    ws.UseScratch(kernel, ScratchCounts(kernel, config, ws.env()));
    *steps = MakeSteps(kernel, loaded, config, ws.env());
  } catch (const ExprError& e) {
    return Fail(ev, Status::kInvalidConfig, fmt::format("launch rule ({}): {}", where, e.what()));
  }
  return true;
}

Evaluator::Timing Evaluator::TimeLaunches(const std::vector<LaunchStep>* candidate,
                                          DeviceWorkspace& ws, bool with_baseline,
                                          const EvalSettings& s) {
  Timing t;
  with_baseline = with_baseline && candidate && baseline_;
  const std::vector<LaunchStep> base_steps =
      baseline_ ? MakeSteps(baseline_->kernel, baseline_->loaded, baseline_->config, ws.env())
                : std::vector<LaunchStep>{};
  const std::vector<LaunchStep>& timed = candidate ? *candidate : base_steps;
  const std::span<const KernelArg> timed_args =
      candidate ? std::span<const KernelArg>(ws.candidate_args()) : ws.task_args();
  const auto start = std::chrono::steady_clock::now();
  double candidate_ms = 0;
  for (int done = 0; done < s.warmup_runs + s.max_runs;) {
    const int batch = std::min(kBatch, s.warmup_runs + s.max_runs - done);
    // Said before the launches are enqueued: a device may start them at once.
    if (candidate) {
      CandidatePhase(batch * (static_cast<int>(candidate->size()) + (with_baseline ? 1 : 0)),
                     *candidate);
    } else {
      Phase(EvalPhase::kLaunch, batch, "baseline");
    }
    int slot = 0;
    for (int j = 0; j < batch; ++j) {
      if (with_baseline) {  // the baseline first, so the last output is the candidate's
        ws.PrepareCandidate();
        Must(device_.EnqueueFlushCache(), "flushing the cache");
        Must(device_.EnqueueTimed(base_steps, ws.task_args(), slot++),
             "the task's baseline kernel");
      }
      ws.PrepareCandidate();
      Must(device_.EnqueueFlushCache(), "flushing the cache");
      if (DeviceStatus e = device_.EnqueueTimed(timed, timed_args, slot++); !e.ok()) {
        t.error = e.message();
        return t;
      }
    }
    DeviceStatus waited = device_.Synchronize();
    Phase(EvalPhase::kHost);
    if (!waited.ok()) {
      t.error = waited.message();
      return t;
    }
    for (int j = 0, k = 0; j < batch; ++j) {
      double b = 0, c = 0;
      if (with_baseline) Must(device_.ElapsedMs(k++, &b), "reading the baseline's time");
      Must(device_.ElapsedMs(k++, &c), "reading a launch's time");
      if (done + j < s.warmup_runs) continue;
      if (with_baseline) t.baseline.push_back(b);
      t.candidate.push_back(c);
      candidate_ms += c;
    }
    done += batch;
    const size_t n = t.candidate.size();
    if (n == 0) continue;
    if (candidate && s.time_to_beat_ms > 0 && static_cast<int>(n) >= s.early_runs &&
        MedianOf(t.candidate) > s.stop_factor * s.time_to_beat_ms) {
      t.early = true;
      break;
    }
    if (static_cast<int>(n) < s.min_runs) continue;
    if (candidate_ms >= s.min_timed_ms &&
        (s.ci_target <= 0 || MedianWithin(t.candidate, s.ci_target)))
      break;
    // The cap is on the loop's wall time: the flushes and poisonings count (on a CPU device a
    // flush of twice the last-level cache costs more than a fast kernel).
    double wall_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (s.max_timing_ms > 0 && wall_ms >= s.max_timing_ms) break;
  }
  return t;
}

const Evaluator::ReusedTiming& Evaluator::ReusedBaselines(DeviceWorkspace& ws,
                                                          const EvalSettings& s, bool kernel) {
  using Clock = std::chrono::steady_clock;
  bool stale = !baseline_timing_ || baseline_timing_->candidates >= s.baseline_every ||
               std::chrono::duration<double>(Clock::now() - baseline_timing_->when).count() >=
                   s.baseline_seconds ||
               (kernel && !baseline_timing_->kernel);
  if (stale) {
    ReusedTiming fresh{std::nullopt, {}, Clock::now(), 0};
    EvalSettings own = s;  // the baselines' own timing is never cut short
    own.time_to_beat_ms = 0;
    own.min_runs = std::max(own.min_runs, 10);
    if (kernel) {
      Timing t = TimeLaunches(nullptr, ws, false, own);
      if (!t.error.empty()) throw ToolError("the task's baseline kernel failed: " + t.error);
      fresh.kernel = Summarize(t.candidate);
    }
    if (source_) {
      Phase(EvalPhase::kHost, 1, "baseline");
      std::vector<BaselineRuns> runs =
          source_->TimeBaselines(ws.set(), ws.ReadInputs(), own, FlushBytes(device_.info()), false);
      fresh.external = Summarized(runs);
    }
    baseline_timing_ = std::move(fresh);
  }
  ++baseline_timing_->candidates;
  return *baseline_timing_;
}

void Evaluator::GhostReplay(DeviceWorkspace& ws, const std::function<void()>& run_reference,
                            const Tolerance& tolerance, const std::string& where) {
  ScrubReferences();
  ws.PrepareCandidate();
  Phase(EvalPhase::kHost, 1, "ghost");
  Must(device_.Enqueue(*ghost_, ws.task_args(), Launch{{1}, {1}}), "the ghost replay");
  run_reference();
  LaunchInspection seen;
  Must(ws.Inspect(false, tolerance, &seen), "inspecting the ghost replay");
  for (size_t o = 0; o < ws.outputs().size(); ++o) {
    const Figures& f = seen.outputs[o];
    if (f.unwritten > 0 || f.nan_count > 0 || f.out_of_tol > 0 ||
        f.bad_ratio() > tolerance.max_bad_ratio)
      return;
  }
  throw ToolError(fmt::format(
      "ghost replay: a kernel that does nothing passed the checks ({}): the harness leaked the "
      "reference's output into the candidate's buffers; no verdict can be trusted",
      where));
}

bool Evaluator::CheckOnDevice(const Kernel& kernel, const Config& config,
                              const LoadedKernels& loaded, const EvalSettings& settings,
                              Evaluation& ev) {
  const DeviceInfo& info = device_.info();
  Figures figures;
  bool ghost_replayed = false;
  for (const SizeSet& set : task_.check_sizes) {
    // One workspace per size set, kept between candidates and refilled with fresh inputs for
    // every seed: a kernel that keeps its result between launches returns the previous answer.
    DeviceWorkspace& ws = WorkspaceOn(set, true);
    const Tolerance tolerance = task_.tolerance.At(set.sizes);
    bool have_previous = false;
    for (int s = 0; s < settings.check_seeds; ++s) {
      uint64_t seed = FreshSeed();
      ev.check_seeds.push_back(seed);
      At("check", set.name, seed);
      const std::string where = Where(), launch_where = where + ", candidate launch";
      Must(ws.Draw(seed), "drawing inputs");
      // The reference runs after the candidate, so no result of it lies on the device while the
      // candidate runs (a kernel could find it and copy it).
      auto run_reference = [&]() { RunReference(ws); };
      if (!ghost_replayed) {
        GhostReplay(ws, run_reference, tolerance, where);
        ghost_replayed = true;
      }
      std::vector<LaunchStep> steps;
      if (!CandidateSteps(kernel, config, loaded, ws, where, ev, &steps)) return false;
      auto run_candidate = [&]() {
        ws.PrepareCandidate();
        CandidatePhase(static_cast<int>(steps.size()), steps);
        LaunchResult c = device_.Run(steps, ws.candidate_args());
        Phase(EvalPhase::kHost);
        return c;
      };
      LaunchResult c = run_candidate();
      if (!c.status.ok()) return LaunchFailed(ev, c.status.message(), steps, info, launch_where);
      run_reference();
      LaunchInspection seen;
      Must(ws.Inspect(have_previous, tolerance, &seen), "inspecting a launch");
      if (!seen.guard.empty()) return Fail(ev, Status::kIncorrect, seen.guard + " (" + where + ")");
      if (!seen.modified_input.empty()) {
        return Fail(
            ev, Status::kIncorrect,
            fmt::format("the kernel modified its input '{}' ({})", seen.modified_input, where));
      }
      Verdict verdict;
      for (size_t o = 0; o < ws.outputs().size(); ++o) {
        const Figures& f = seen.outputs[o];
        figures.Merge(f);
        if (verdict) continue;
        verdict =
            VerdictFrom(task_.args[ws.outputs()[o]], f, tolerance, where, [&](bool reference) {
              return ws.OutputElement(o, std::max<int64_t>(f.first_bad, 0), reference);
            });
      }
      RecordFigures(figures, ev);
      if (verdict) {
        bool previous = !seen.vs_previous.empty();
        for (const Figures& p : seen.vs_previous) {
          previous = previous && p.out_of_tol == 0 && p.bad_ratio() <= tolerance.max_bad_ratio;
        }
        if (previous) {
          return CarriedOver(ev, where);
        }
        if (!kernel.scratch.empty()) {
          ev.hints.push_back(
              "scratch buffers are poisoned (NaN or 0xDEADBEEF) before the first launch: a launch "
              "that reads an element no earlier launch wrote passes the poison on");
        }
        return Fail(ev, verdict->first, verdict->second);
      }
      if (s == 0) {  // the same inputs again must give the same bits
        ws.KeepOutputs();
        LaunchResult again = run_candidate();
        if (!again.status.ok())
          return LaunchFailed(ev, again.status.message(), steps, info, launch_where);
        Must(ws.Inspect(false, tolerance, &seen), "inspecting a launch");
        if (!seen.guard.empty())
          return Fail(ev, Status::kIncorrect, seen.guard + " (" + where + ")");
        int64_t differing = 0;
        Must(ws.DifferFromKept(&differing), "comparing two launches");
        if (differing > 0) {
          return Fail(ev, Status::kIncorrect,
                      fmt::format("nondeterministic: a second launch on the same inputs differs "
                                  "in {} elements (a race between work-items?) ({})",
                                  differing, where));
        }
      }
      ws.KeepPrevious();
      have_previous = true;
    }
  }
  return true;
}

bool Evaluator::TimeOnDevice(const Kernel& kernel, const Config& config,
                             const LoadedKernels& loaded, const SizeSet& bench,
                             const EvalSettings& settings, Evaluation& ev) {
  const DeviceInfo& info = device_.info();
  DeviceWorkspace& ws = WorkspaceOn(bench, false);
  const Tolerance tolerance = task_.tolerance.At(bench.sizes);
  uint64_t seed = FreshSeed();
  At("time", bench.name, seed);
  const std::string where = Where();
  Must(ws.Draw(seed), "drawing inputs");
  std::vector<LaunchStep> steps;
  if (!CandidateSteps(kernel, config, loaded, ws, where, ev, &steps)) return false;
  // Careful timing: the baseline kernel interleaved with every candidate launch, and PyTorch's
  // own times (a PyTorch reference) in rounds alternating with the candidate's, on the same
  // inputs. A search's fast timing: both timed every so often and reused.
  const bool interleave = settings.interleave_baseline && baseline_;
  std::optional<TimingStats> baseline;
  Timing t;
  if (settings.interleave_baseline && source_) {
    t = TimeInRounds(steps, ws, interleave, settings, &ev.external_baselines);
  } else {
    const ReusedTiming& reused = ReusedBaselines(ws, settings, baseline_ && !interleave);
    ev.external_baselines = reused.external;
    baseline = reused.kernel;
    t = TimeLaunches(&steps, ws, interleave, settings);
  }
  if (!t.error.empty()) return LaunchFailed(ev, t.error, steps, info, where + ", candidate launch");
  if (!baseline_) {  // PyTorch eager is the baseline
    const ExternalBaseline* eager =
        ev.external_baselines.empty() ? nullptr : &ev.external_baselines.front();
    if (!eager || !eager->time)
      throw ToolError("the reference's baseline could not be timed: " +
                      (eager ? eager->unavailable : std::string("no figure")));
    baseline = eager->time;
  }
  // The reference after the timed launches, for their re-check: never on the device beside them.
  RunReference(ws);
  ev.time = Summarize(t.candidate);
  ev.baseline_time = interleave ? Summarize(t.baseline) : *baseline;
  if (t.early) {
    ev.hints.push_back(fmt::format(
        "timing stopped after {} runs: {:.1f}x slower than the time to beat ({:.4f} ms)",
        t.candidate.size(), ev.time->median_ms / settings.time_to_beat_ms,
        settings.time_to_beat_ms));
  }
  // Re-check what the timed launches produced, and that they left the inputs alone.
  LaunchInspection seen;
  Must(ws.Inspect(false, tolerance, &seen), "inspecting the timed launches");
  if (!seen.guard.empty()) return Fail(ev, Status::kIncorrect, seen.guard + " (" + where + ")");
  if (!seen.modified_input.empty()) {
    return Fail(ev, Status::kIncorrect,
                fmt::format("the kernel modified its input '{}' ({})", seen.modified_input, where));
  }
  for (size_t o = 0; o < ws.outputs().size(); ++o) {
    const Figures& f = seen.outputs[o];
    if (Verdict v =
            VerdictFrom(task_.args[ws.outputs()[o]], f, tolerance, where, [&](bool reference) {
              return ws.OutputElement(o, std::max<int64_t>(f.first_bad, 0), reference);
            })) {
      return Fail(ev, v->first,
                  "the timed launch's output differs from the reference: " + v->second);
    }
  }
  return Derive(ws.env(), ev);
}

}  // namespace kf
