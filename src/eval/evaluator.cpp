#include "eval/evaluator.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/input_error.hpp"
#include "eval/compare.hpp"
#include "eval/device_tools.hpp"
#include "eval/device_workspace.hpp"
#include "eval/ghost_replay.hpp"
#include "eval/precheck.hpp"
#include "eval/verdict.hpp"
#include "eval/workspace.hpp"

namespace kf {

std::string DescribePlace(const EvalPlace& place) {
  std::string out = place.step == "time" ? "timing" : place.step;
  if (!place.sizes.empty()) out += fmt::format(" at size set '{}'", place.sizes);
  if (place.seed) out += fmt::format(", seed {}", *place.seed);
  if (!place.launch.empty())
    out += fmt::format("{}{} launch", out.empty() ? "" : ", ", place.launch);
  return out;
}

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
    CheckKernelAgainstTask(task, p->kernel);
    p->config = p->kernel.ResolveConfig({});
    if (!p->kernel.scratch.empty()) {
      throw InputError(p->kernel.path, p->kernel.scratch.front().line, "@scratch",
                       std::string("the task's ") + role +
                           " kernel cannot declare scratch buffers (only a candidate can)");
    }
    CompileResult c =
        CompileCached(device, cache, CompileRequestFor(p->kernel, p->config, task.defines));
    if (!c.ok)
      throw InputError(
          p->kernel.path, 0, role,
          "the task's own kernel does not compile:\n" + CompileLogFor(c.log, p->kernel.path));
    std::string error;
    p->loaded = LoadKernels(device, c.artifact, &error);
    if (p->loaded.empty())
      throw InputError(p->kernel.path, 0, role, "the task's own kernel does not load: " + error);
    return p;
  };
  const bool torch = !task.torch_reference.empty();
  if (torch && options_.reference_source) source_ = options_.reference_source(task, device.info());
  if (torch && !task.reference.contains(lang) && !source_) {
    throw InputError(task.dir + "/task.toml", 0, "kernels.reference",
                     fmt::format("the reference is the PyTorch module '{}', which this evaluator "
                                 "cannot run: give a reference kernel for {} beside it",
                                 task.torch_reference, LanguageName(lang)));
  }
  if (!source_ || task.reference.contains(lang)) reference_ = prepare(task.reference, "reference");
  // With a PyTorch reference, PyTorch's own time is the baseline where no kernel is given.
  if (!source_ || task.baseline.contains(lang)) baseline_ = prepare(task.baseline, "baseline");
  CompileResult ghost =
      CompileCached(device, cache, {GhostKernelSource(task, lang), {kGhostEntry}, {}});
  std::string error;
  if (ghost.ok) ghost_ = device.Load(ghost.artifact, ghost.artifact.symbols.front(), &error);
  if (!ghost_) throw ToolError("the ghost replay's kernel does not build: " + ghost.log + error);
  peak_ = ResolvePeakBandwidth(device, cache);
  peak_compute_ = ResolvePeakCompute(device, cache);
}

int64_t FlushBytes(const DeviceInfo& info) {
  return info.cache_bytes > 0 ? 2 * info.cache_bytes : int64_t{64} << 20;
}

void Evaluator::RunReference(DeviceWorkspace& ws) {
  Phase(EvalPhase::kHost, 1, "reference");
  if (reference_) {
    Must(ws.EnqueueReference(
             MakeSteps(reference_->kernel, reference_->loaded, reference_->config, ws.env())),
         "the task's reference kernel");
    return;
  }
  ws.SetReference(source_->Outputs(ws.set(), ws.ReadInputs()));
}

void Evaluator::ScrubReferences() {
  for (auto& [name, ws] : workspaces_) ws->ScrubReferences();
}

double Evaluator::MeasureBaselineLaunchMs() {
  const DeviceInfo& info = device_.info();
  const SizeSet& bench =
      task_.BenchSizes(options_.bench_sizes, std::string(DeviceClassName(info.device_class)));
  DeviceWorkspace& ws = WorkspaceOn(bench, false);
  Must(ws.Draw(FreshSeed()), "drawing the baseline's inputs");
  if (!baseline_) {  // PyTorch eager is the baseline: a few runs of it
    EvalSettings few;
    few.warmup_runs = 1;
    few.min_runs = few.max_runs = 3;
    few.min_timed_ms = 0;
    std::vector<BaselineRuns> b =
        source_->TimeBaselines(bench, ws.ReadInputs(), few, FlushBytes(info), true);
    if (b.empty() || b.front().times_ms.empty())
      throw ToolError("the reference's baseline could not be timed: " +
                      (b.empty() ? std::string("no figure") : b.front().unavailable));
    return Summarize(b.front().times_ms).median_ms;
  }
  const std::vector<LaunchStep> steps =
      MakeSteps(baseline_->kernel, baseline_->loaded, baseline_->config, ws.env());
  std::vector<double> ms;
  for (int i = 0; i < 4; ++i) {
    ws.PrepareCandidate();
    LaunchResult r = device_.Run(steps, ws.task_args());
    if (!r.status.ok()) throw ToolError("the task's baseline kernel failed: " + r.status.message());
    if (i > 0) ms.push_back(r.elapsed_ms);
  }
  return Summarize(ms).median_ms;
}

DeviceWorkspace& Evaluator::WorkspaceOn(const SizeSet& set, bool checks) {
  if (!tools_) tools_ = std::make_unique<DeviceTools>(device_, cache_);
  std::unique_ptr<DeviceWorkspace>& ws = workspaces_[(checks ? "check " : "bench ") + set.name];
  if (!ws) ws = std::make_unique<DeviceWorkspace>(device_, *tools_, task_, set, checks);
  return *ws;
}

Evaluation Evaluator::Evaluate(const RunRequest& request, std::string* listing) {
  const DeviceInfo& info = device_.info();
  const Kernel& kernel = request.candidate.kernel;
  const Config& config = request.candidate.config;
  const SizeSet& bench =
      task_.BenchSizes(options_.bench_sizes, std::string(DeviceClassName(info.device_class)));
  if (std::optional<Evaluation> rejected = Precheck(task_, kernel, config, info, bench, nullptr))
    return *rejected;
  Evaluation ev;
  ev.device = info.Label();
  ev.config = config;
  ev.bench_sizes = bench.name;
  const EvalSettings settings = request.candidate.settings.value_or(options_.settings);
  const bool on_host = settings.check_on == "host";
  if (on_host && (!reference_ || !baseline_)) {
    throw InputError(task_.dir + "/task.toml", 0, "kernels",
                     "checking on the host needs the task's reference and baseline kernels; a "
                     "PyTorch reference is checked on the device path");
  }
  LoadedKernels loaded;
  At("load");
  Phase(EvalPhase::kHost);  // a supervisor learns that a new evaluation began
  using Clock = std::chrono::steady_clock;
  auto timed = [&](const char* phase, auto&& step) {
    Clock::time_point start = Clock::now();
    bool passed = step();
    ev.phase_ms[phase] = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    return passed;
  };
  try {
    launched_blocks_.clear();
    bool ok = timed("load", [&] { return Load(request, ev, &loaded, listing); }) &&
              timed("check",
                    [&] {
                      candidate_load_s_ = ev.phase_ms["load"] * 1e-3;
                      return ProbePrecision(kernel, config, loaded, ev) &&
                             (on_host ? CheckOnHost(kernel, config, loaded, settings, ev)
                                      : CheckOnDevice(kernel, config, loaded, settings, ev));
                    }) &&
              timed("time", [&] {
                return on_host ? TimeOnHost(kernel, config, loaded, bench, settings, ev)
                               : TimeOnDevice(kernel, config, loaded, bench, settings, ev);
              });
    if (ok) ev.status = Status::kOk;
  } catch (const ExprError& e) {
    throw InputError(task_.dir + "/task.toml", 0, "sizes", e.what());
  }
  return ev;
}

bool Evaluator::Load(const RunRequest& request, Evaluation& ev, LoadedKernels* loaded,
                     std::string* listing) {
  const DeviceInfo& info = device_.info();
  const Kernel& kernel = request.candidate.kernel;
  CompileResult compiled;
  if (request.compiled && request.compiled->ok) {
    compiled = *request.compiled;  // a builder made it
  } else {
    Phase(EvalPhase::kCompile);
    compiled = CompileCached(device_, cache_,
                             CompileRequestFor(kernel, request.candidate.config, task_.defines));
    Phase(EvalPhase::kHost);
  }
  ev.compile_log = CompileLogFor(compiled.log, kernel.path);
  ev.compile_cache_hit = compiled.cache_hit;
  if (!compiled.ok) return CompileFailed(ev, compiled.log, kernel.path, info);
  if (listing) *listing = compiled.artifact.listing;
  std::string load_error;
  if (compiled.artifact.symbols.size() != kernel.launches.size()) {
    return Fail(ev, Status::kCompileError,
                fmt::format("the compiled module names {} entry points; the kernel launches {}",
                            compiled.artifact.symbols.size(), kernel.launches.size()));
  }
  *loaded = LoadKernels(device_, compiled.artifact, &load_error);
  if (loaded->empty())
    return Fail(ev, Status::kCompileError, "the compiled kernel does not load: " + load_error);
  // What each compiled entry point needs, against what the device gives, before anything is
  // launched (some drivers abort the process rather than fail the launch).
  for (size_t i = 0; i < loaded->size(); ++i) {
    if (!FitsDevice(*(*loaded)[i], i, kernel, request.candidate.config, ev)) return false;
  }
  return true;
}

bool Evaluator::FitsDevice(LoadedKernel& loaded, size_t launch, const Kernel& kernel,
                           const Config& config, Evaluation& ev) {
  const DeviceInfo& info = device_.info();
  const SizeSet& bench =
      task_.BenchSizes(options_.bench_sizes, std::string(DeviceClassName(info.device_class)));
  const std::string which = kernel.launches.size() > 1
                                ? fmt::format(" (entry point {})", kernel.launches[launch].entry)
                                : "";
  int64_t group_size = 1;
  for (int64_t b : MakeLaunch(kernel.launches[launch], config, SizesEnv(bench.sizes)).block)
    group_size *= b;
  KernelResources needs = loaded.resources();
  if (needs.static_local_bytes > info.local_mem_bytes) {
    ev.hints.push_back(
        fmt::format("local/shared memory over the device limit ({} bytes per group on {})",
                    info.local_mem_bytes, info.name));
    return Fail(ev, Status::kCompileError,
                fmt::format("the kernel{} declares {} bytes of local/shared memory per group; the "
                            "device allows {}",
                            which, needs.static_local_bytes, info.local_mem_bytes));
  }
  if (needs.max_group_size > 0 && group_size > needs.max_group_size) {
    ev.hints.push_back(
        "too many registers or too much local memory per work-item for this block size");
    return Fail(ev, Status::kLaunchError,
                fmt::format("block of {} work-items, but the compiled kernel{} allows at most {} "
                            "(its register or local-memory use)",
                            group_size, which, needs.max_group_size));
  }
  return true;
}

void Evaluator::CandidatePhase(int launches, std::span<const LaunchStep> steps) {
  ScrubReferences();
  double compiling_s = 0;
  for (const LaunchStep& step : steps) {
    if (device_.info().CompilesAtFirstLaunch() && launched_blocks_.insert(step.launch.block).second)
      compiling_s += std::max(candidate_load_s_, 1e-3);
  }
  Phase(EvalPhase::kLaunch, launches, "candidate", compiling_s);
}

bool Evaluator::Derive(const Env& sizes, Evaluation& ev) {
  const DeviceInfo& info = device_.info();
  if (ev.time->median_ms > 0) ev.speedup = ev.baseline_time->median_ms / ev.time->median_ms;
  for (ExternalBaseline& b : ev.external_baselines) {
    if (b.time && ev.time->median_ms > 0) b.speedup = b.time->median_ms / ev.time->median_ms;
  }
  double bytes = task_.min_bytes.Eval(sizes);
  if (ev.time->median_ms > 0 && bytes > 0) {
    ev.bandwidth_gbs = bytes / (ev.time->median_ms * 1e-3) / 1e9;
    if (peak_.gbs > 0) {
      ev.roofline_fraction = *ev.bandwidth_gbs / peak_.gbs;
      double best_gbs = bytes / (ev.time->min_ms * 1e-3) / 1e9;
      double margin = info.device_class == DeviceClass::kCpu ? options_.cpu_plausibility_margin
                                                             : options_.plausibility_margin;
      if (best_gbs > peak_.gbs * margin) {
        return Fail(
            ev, Status::kImplausible,
            fmt::format("{:.1f} GB/s at the fastest run exceeds the device's peak {:.1f} GB/s "
                        "({}) by more "
                        "than {:.2f}x: the kernel cannot have moved the task's minimum bytes",
                        best_gbs, peak_.gbs, peak_.source, margin));
      }
    }
  }
  return CheckComputeFloor(sizes, ev);
}

bool Evaluator::CheckComputeFloor(const Env& sizes, Evaluation& ev) {
  if (!task_.flops) return true;
  const double flops = task_.flops->Eval(sizes);
  const double peak_gflops = peak_compute_.Max();
  if (ev.time->median_ms > 0 && flops > 0) {
    ev.gflops = flops / (ev.time->median_ms * 1e-3) / 1e9;
    if (peak_gflops > 0) ev.compute_fraction = *ev.gflops / peak_gflops;
  }
  if (ev.time->min_ms <= 0 || peak_gflops <= 0) return true;
  const double best_gflops = flops / (ev.time->min_ms * 1e-3) / 1e9;
  const double margin = device_.info().device_class == DeviceClass::kCpu
                            ? options_.cpu_compute_margin
                            : options_.compute_margin;
  if (best_gflops <= peak_gflops * margin) return true;
  std::string classes;
  for (const auto& [name, g] : peak_compute_.gflops)
    classes += fmt::format("{}{} {:.1f}", classes.empty() ? "" : ", ", name, g);
  return Fail(ev, Status::kImplausible,
              fmt::format("{:.1f} GFLOP/s at the fastest run exceeds the device's peak {:.1f} "
                          "GFLOP/s ({}; {}) by more than {:.2f}x: the kernel cannot have done the "
                          "task's {:.3g} FLOPs (under the FLOP floor)",
                          best_gflops, peak_gflops, classes, peak_compute_.source, margin, flops));
}

}  // namespace kf
