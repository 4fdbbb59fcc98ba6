#include "eval/evaluator.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/input_error.hpp"
#include "eval/compare.hpp"
#include "eval/hints.hpp"
#include "eval/precheck.hpp"
#include "eval/workspace.hpp"

namespace kf {

struct Evaluator::Prepared {
  Kernel kernel;
  Config config;
  std::unique_ptr<LoadedKernel> loaded;
};

namespace {

// Verdict on one comparison, or nullopt when it passes.
std::optional<std::pair<Status, std::string>> VerdictOf(const Task& task,
                                                        const std::vector<HostBuffer>& ref,
                                                        const std::vector<HostBuffer>& out,
                                                        const std::string& where, Figures& total) {
  std::optional<std::pair<Status, std::string>> verdict;
  for (size_t i = 0; i < task.args.size(); ++i) {
    const ArgSpec& a = task.args[i];
    if (!a.is_buffer || a.role == ArgRole::kIn) continue;
    Figures f = CompareOutput(ref[i], out[i], PoisonPattern(a.dtype), task.tolerance);
    total.Merge(f);
    if (verdict) continue;
    if (f.unwritten > 0) {
      verdict = {{Status::kIncorrect, fmt::format("{}: {} of {} elements never written ({})",
                                                  a.name, f.unwritten, f.elements, where)}};
    } else if (f.nan_count > 0) {
      verdict = {
          {Status::kNan, fmt::format("{}: {} NaN/Inf elements where the reference is finite ({})",
                                     a.name, f.nan_count, where)}};
    } else if (f.out_of_tol > 0 || f.bad_ratio() > task.tolerance.max_bad_ratio) {
      size_t k = static_cast<size_t>(std::max<int64_t>(f.first_bad, 0));
      verdict = {
          {Status::kIncorrect, fmt::format("{}: {} of {} elements out of tolerance, {:.3g}% over "
                                           "1% relative error; first at [{}]: "
                                           "got {:.6g}, expected {:.6g} ({})",
                                           a.name, f.out_of_tol, f.elements, 100.0 * f.bad_ratio(),
                                           k, LoadElement(out[i].bytes.data(), a.dtype, k),
                                           LoadElement(ref[i].bytes.data(), a.dtype, k), where)}};
    }
  }
  return verdict;
}

}  // namespace

Evaluator::~Evaluator() = default;

Evaluator::Evaluator(Device& device, const Task& task, const CompileCache& cache,
                     EvalOptions options)
    : device_(device), task_(task), cache_(cache), options_(std::move(options)) {
  Language lang = device.info().language();
  auto prepare = [&](const std::map<Language, std::string>& files, const char* role) {
    auto it = files.find(lang);
    if (it == files.end()) {
      throw InputError(
          task.dir + "/task.toml", 0, std::string("kernels.") + role,
          fmt::format("no {} kernel for {}", LanguageName(lang), device.info().Selector()));
    }
    auto p = std::make_unique<Prepared>();
    p->kernel = LoadKernelFile(task.PathOf(it->second));
    CheckKernelSignature(task, p->kernel);
    p->config = p->kernel.ResolveConfig({});
    std::vector<std::pair<std::string, std::string>> defines(p->config.begin(), p->config.end());
    CompileResult c = CompileCached(device, cache, {p->kernel.source, p->kernel.entry, defines});
    if (!c.ok)
      throw InputError(p->kernel.path, 0, role,
                       "the task's own kernel does not compile:\n" + c.log);
    std::string error;
    p->loaded = device.Load(c.artifact, &error);
    if (!p->loaded)
      throw InputError(p->kernel.path, 0, role, "the task's own kernel does not load: " + error);
    return p;
  };
  reference_ = prepare(task.reference, "reference");
  baseline_ = prepare(task.baseline, "baseline");
  peak_ = ResolvePeakBandwidth(device, cache);
}

double Evaluator::MeasureBaselineLaunchMs() {
  const DeviceInfo& info = device_.info();
  const SizeSet& bench =
      task_.BenchSizes(options_.bench_sizes, std::string(DeviceClassName(info.device_class)));
  Workspace ws = MakeWorkspace(device_, task_, bench.sizes, FreshSeed());
  Launch launch = MakeLaunch(baseline_->kernel, baseline_->config, ws.env);
  PrepareLaunch(device_, task_, ws, true);
  std::vector<double> ms;
  for (int i = 0; i < 4; ++i) {
    LaunchResult r = device_.Run(*baseline_->loaded, ws.args, launch);
    if (!r.status.ok()) throw ToolError("the task's baseline kernel failed: " + r.status.message());
    if (i > 0) ms.push_back(r.elapsed_ms);
  }
  return Summarize(ms).median_ms;
}

Evaluation Evaluator::Evaluate(const RunRequest& request, std::string* listing) {
  const DeviceInfo& info = device_.info();
  const Kernel& kernel = request.candidate.kernel;
  const Config& config = request.candidate.config;
  const SizeSet& bench =
      task_.BenchSizes(options_.bench_sizes, std::string(DeviceClassName(info.device_class)));
  int64_t group_size = 1;
  if (std::optional<Evaluation> rejected =
          Precheck(task_, kernel, config, info, bench, &group_size))
    return *rejected;
  Evaluation ev;
  ev.device = info.Label();
  ev.config = config;
  ev.bench_sizes = bench.name;
  std::unique_ptr<LoadedKernel> loaded;
  try {
    if (Load(request, group_size, ev, &loaded, listing) && Check(kernel, config, *loaded, ev) &&
        Time(kernel, config, *loaded, bench, ev)) {
      ev.status = Status::kOk;
    }
  } catch (const ExprError& e) {
    throw InputError(task_.dir + "/task.toml", 0, "sizes", e.what());
  }
  return ev;
}

namespace {

bool Fail(Evaluation& ev, Status s, std::string reason) {
  ev.status = s;
  ev.reason = std::move(reason);
  return false;
}

}  // namespace

bool Evaluator::Load(const RunRequest& request, int64_t group_size, Evaluation& ev,
                     std::unique_ptr<LoadedKernel>* loaded, std::string* listing) {
  const DeviceInfo& info = device_.info();
  const Kernel& kernel = request.candidate.kernel;
  CompileResult compiled;
  if (request.compiled && request.compiled->ok) {
    compiled = *request.compiled;  // a builder made it
  } else {
    std::vector<std::pair<std::string, std::string>> defines(request.candidate.config.begin(),
                                                             request.candidate.config.end());
    Phase(EvalPhase::kCompile);
    compiled = CompileCached(device_, cache_, {kernel.source, kernel.entry, defines});
    Phase(EvalPhase::kHost);
  }
  ev.compile_log = compiled.log;
  ev.compile_cache_hit = compiled.cache_hit;
  if (!compiled.ok) {
    ev.hints = CompileHints(compiled.log, info);
    std::string first_line = compiled.log.substr(0, compiled.log.find('\n'));
    return Fail(ev, Status::kCompileError, first_line.empty() ? "compilation failed" : first_line);
  }
  if (listing) *listing = compiled.artifact.listing;
  std::string load_error;
  *loaded = device_.Load(compiled.artifact, &load_error);
  if (!*loaded)
    return Fail(ev, Status::kCompileError, "the compiled kernel does not load: " + load_error);
  // What the compiled kernel needs, against what the device gives, before anything is launched
  // (some drivers abort the process rather than fail the launch).
  KernelResources needs = (*loaded)->resources();
  if (needs.static_local_bytes > info.local_mem_bytes) {
    ev.hints.push_back(
        fmt::format("local/shared memory over the device limit ({} bytes per group on {})",
                    info.local_mem_bytes, info.name));
    return Fail(ev, Status::kCompileError,
                fmt::format("the kernel declares {} bytes of local/shared memory per group; the "
                            "device allows {}",
                            needs.static_local_bytes, info.local_mem_bytes));
  }
  if (needs.max_group_size > 0 && group_size > needs.max_group_size) {
    ev.hints.push_back(
        "too many registers or too much local memory per work-item for this block size");
    return Fail(ev, Status::kLaunchError,
                fmt::format("block of {} work-items, but the compiled kernel allows at most {} "
                            "(its register or local-memory use)",
                            group_size, needs.max_group_size));
  }
  return true;
}

bool Evaluator::Check(const Kernel& kernel, const Config& config, LoadedKernel& loaded,
                      Evaluation& ev) {
  const DeviceInfo& info = device_.info();
  auto fail = [&](Status s, std::string reason) { return Fail(ev, s, std::move(reason)); };
  auto launch_failed = [&](const Launch& l, const std::string& error, const std::string& where) {
    ev.hints = LaunchHints(error, l, info);
    return fail(Status::kLaunchError, fmt::format("{} ({})", error, where));
  };
  // Check: every check size set, fresh seeds each time, outputs poisoned, inputs checksummed.
  Figures figures;
  for (const SizeSet& set : task_.check_sizes) {
    // One set of buffers per size set, refilled with fresh inputs for every seed: a kernel that
    // keeps its result between launches (keyed on its buffers, or in device globals) returns
    // the previous inputs' answer.
    Workspace ws;
    std::vector<HostBuffer> previous_ref;
    for (int s = 0; s < options_.check_seeds; ++s) {
      uint64_t seed = FreshSeed();
      ev.check_seeds.push_back(seed);
      std::string where = fmt::format("size set '{}', seed {}", set.name, seed);
      if (s == 0) {
        ws = MakeWorkspace(device_, task_, set.sizes, seed);
      } else {
        RefillInputs(task_, ws, seed);
      }
      Launch ref_launch = MakeLaunch(reference_->kernel, reference_->config, ws.env);
      PrepareLaunch(device_, task_, ws, true);
      LaunchResult r = device_.Run(*reference_->loaded, ws.args, ref_launch);
      if (!r.status.ok())
        throw ToolError("the task's reference kernel failed: " + r.status.message());
      std::vector<HostBuffer> ref = ReadOutputs(device_, task_, ws);

      Launch launch;
      try {
        launch = MakeLaunch(kernel, config, ws.env);
      } catch (const ExprError& e) {
        return fail(Status::kInvalidConfig, fmt::format("launch rule at {}: {}", where, e.what()));
      }
      auto run_candidate = [&]() {
        PrepareLaunch(device_, task_, ws, true);
        Phase(EvalPhase::kLaunch);
        LaunchResult c = device_.Run(loaded, ws.args, launch);
        Phase(EvalPhase::kHost);
        return c;
      };
      LaunchResult c = run_candidate();
      if (!c.status.ok()) return launch_failed(launch, c.status.message(), where);
      std::vector<HostBuffer> out = ReadOutputs(device_, task_, ws);
      if (std::string input = ModifiedInput(device_, task_, ws); !input.empty()) {
        return fail(Status::kIncorrect,
                    fmt::format("the kernel modified its input '{}' ({})", input, where));
      }
      auto verdict = VerdictOf(task_, ref, out, where, figures);
      ev.max_abs_err = figures.max_abs_err;
      ev.max_rel_err = figures.max_rel_err;
      ev.bad_ratio = figures.bad_ratio();
      ev.nan_count = figures.nan_count;
      if (verdict) {
        Figures scratch;
        if (!previous_ref.empty() && !VerdictOf(task_, previous_ref, out, where, scratch)) {
          return fail(Status::kIncorrect,
                      fmt::format("the output is the previous launch's result, not this one's: "
                                  "state carried between launches ({})",
                                  where));
        }
        return fail(verdict->first, verdict->second);
      }
      if (s == 0) {  // the same inputs again must give the same bits
        LaunchResult again = run_candidate();
        if (!again.status.ok()) return launch_failed(launch, again.status.message(), where);
        int64_t differing = DifferingElements(task_, out, ReadOutputs(device_, task_, ws));
        if (differing > 0) {
          return fail(Status::kIncorrect,
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

bool Evaluator::Time(const Kernel& kernel, const Config& config, LoadedKernel& loaded,
                     const SizeSet& bench, Evaluation& ev) {
  const DeviceInfo& info = device_.info();
  auto fail = [&](Status s, std::string reason) { return Fail(ev, s, std::move(reason)); };
  auto launch_failed = [&](const Launch& l, const std::string& error, const std::string& where) {
    ev.hints = LaunchHints(error, l, info);
    return fail(Status::kLaunchError, fmt::format("{} ({})", error, where));
  };
  // Time: interleaved with the baseline on the same inputs, cache flushed before each launch.
  uint64_t seed = FreshSeed();
  std::string where = fmt::format("timed launches at size set '{}', seed {}", bench.name, seed);
  Workspace ws = MakeWorkspace(device_, task_, bench.sizes, seed);
  Launch ref_launch = MakeLaunch(reference_->kernel, reference_->config, ws.env);
  Launch base_launch = MakeLaunch(baseline_->kernel, baseline_->config, ws.env);
  Launch launch = MakeLaunch(kernel, config, ws.env);
  PrepareLaunch(device_, task_, ws, true);
  LaunchResult r = device_.Run(*reference_->loaded, ws.args, ref_launch);
  if (!r.status.ok()) throw ToolError("the task's reference kernel failed: " + r.status.message());
  std::vector<HostBuffer> ref = ReadOutputs(device_, task_, ws);

  bool has_inout = false;
  for (const ArgSpec& a : task_.args)
    has_inout = has_inout || (a.is_buffer && a.role == ArgRole::kInOut);
  std::vector<double> cand_ms, base_ms;
  double cand_total = 0;
  for (int i = 0; i < options_.warmup_runs + options_.max_runs; ++i) {
    bool warm = i < options_.warmup_runs;
    if (has_inout) PrepareLaunch(device_, task_, ws, false);
    Must(device_.FlushCache(), "flushing the cache");
    LaunchResult b = device_.Run(*baseline_->loaded, ws.args, base_launch);
    if (!b.status.ok()) throw ToolError("the task's baseline kernel failed: " + b.status.message());
    PrepareLaunch(device_, task_, ws,
                  false);  // poison, so the timed output is the candidate's own
    Must(device_.FlushCache(), "flushing the cache");
    Phase(EvalPhase::kLaunch);
    LaunchResult c = device_.Run(loaded, ws.args, launch);
    Phase(EvalPhase::kHost);
    if (!c.status.ok()) return launch_failed(launch, c.status.message(), where);
    if (warm) continue;
    base_ms.push_back(b.elapsed_ms);
    cand_ms.push_back(c.elapsed_ms);
    cand_total += c.elapsed_ms;
    if (static_cast<int>(cand_ms.size()) >= options_.min_runs &&
        cand_total >= options_.min_timed_ms)
      break;
  }
  ev.time = Summarize(cand_ms);
  ev.baseline_time = Summarize(base_ms);

  // Re-check what the timed launches produced, and that they left the inputs alone.
  std::vector<HostBuffer> out = ReadOutputs(device_, task_, ws);
  if (std::string input = ModifiedInput(device_, task_, ws); !input.empty()) {
    return fail(Status::kIncorrect,
                fmt::format("the kernel modified its input '{}' ({})", input, where));
  }
  Figures timed;
  if (auto verdict = VerdictOf(task_, ref, out, where, timed)) {
    return fail(verdict->first,
                "the timed launch's output differs from the reference: " + verdict->second);
  }

  if (ev.time->median_ms > 0) ev.speedup = ev.baseline_time->median_ms / ev.time->median_ms;
  double bytes = task_.min_bytes.Eval(ws.env);
  if (ev.time->median_ms > 0 && bytes > 0) {
    ev.bandwidth_gbs = bytes / (ev.time->median_ms * 1e-3) / 1e9;
    if (peak_.gbs > 0) {
      ev.roofline_fraction = *ev.bandwidth_gbs / peak_.gbs;
      double best_gbs = bytes / (ev.time->min_ms * 1e-3) / 1e9;
      double margin = info.device_class == DeviceClass::kCpu ? options_.cpu_plausibility_margin
                                                             : options_.plausibility_margin;
      if (best_gbs > peak_.gbs * margin) {
        return fail(
            Status::kImplausible,
            fmt::format("{:.1f} GB/s at the fastest run exceeds the device's peak {:.1f} GB/s "
                        "({}) by more "
                        "than {:.2f}x: the kernel cannot have moved the task's minimum bytes",
                        best_gbs, peak_.gbs, peak_.source, margin));
      }
    }
  }
  return true;
}

}  // namespace kf
