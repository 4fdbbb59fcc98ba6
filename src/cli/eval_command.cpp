#include "cli/eval_command.hpp"

#include <fmt/format.h>

#include <iostream>

#include "backend/registry.hpp"
#include "core/codec.hpp"
#include "core/input_error.hpp"
#include "core/task_library.hpp"
#include "eval/evaluator.hpp"
#include "eval/precheck.hpp"
#include "host/judge.hpp"
#include "search/classifier.hpp"
#include "torch/torch_reference.hpp"

namespace kf {

namespace {

std::string FormatMs(const std::optional<TimingStats>& t) {
  if (!t) return "-";
  return fmt::format("{:.4f} ms (min {:.4f}, max {:.4f}, {} runs)", t->median_ms, t->min_ms,
                     t->max_ms, t->runs);
}

Config ParseSets(const Kernel& kernel, const std::vector<std::string>& sets) {
  Config overrides;
  for (const std::string& s : sets) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) throw InputError("--set", 0, s, "expected NAME=VALUE");
    overrides[s.substr(0, eq)] = s.substr(eq + 1);
  }
  return kernel.ResolveConfig(overrides);
}

void CheckLanguage(const Kernel& kernel, Language device_language, const std::string& device) {
  if (device_language != kernel.language) {
    throw InputError(kernel.path, 0, "language",
                     fmt::format("a {} kernel cannot run on {}; pick a device with --device",
                                 LanguageName(kernel.language), device));
  }
}

// The compute side of the roofline: the task's FLOPs at the timed sizes over the median time,
// against the device's peak arithmetic rate (its fastest class).
void PrintCompute(const Evaluation& ev, const Task& task, double peak_gflops,
                  const std::string& peak_source) {
  if (!task.flops || !ev.time || ev.time->median_ms <= 0 || ev.bench_sizes.empty()) return;
  const double flops = task.flops->Eval(SizesEnv(task.BenchSizes(ev.bench_sizes, "").sizes));
  const double gflops = flops / (ev.time->median_ms * 1e-3) / 1e9;
  fmt::print("compute     {:.1f} GFLOP/s", gflops);
  if (peak_gflops > 0)
    fmt::print(" = {:.1f}% of {:.1f} GFLOP/s ({})", 100 * gflops / peak_gflops, peak_gflops,
               peak_source);
  fmt::print("\n");
}

void PrintEvaluation(const Evaluation& ev, const Task& task, double peak_gbs,
                     const std::string& peak_source, double peak_gflops,
                     const std::string& peak_gflops_source) {
  fmt::print("status      {}{}\n", StatusName(ev.status),
             ev.reason.empty() ? "" : ": " + ev.reason);
  fmt::print("device      {}\n", ev.device);
  fmt::print("config      {}\n", ConfigToString(ev.config));
  if (ev.compared) {
    fmt::print("errors      max abs {:.3g}, max rel {:.3g}, bad ratio {:.3g}, NaN {}\n",
               ev.max_abs_err, ev.max_rel_err, ev.bad_ratio, ev.nan_count);
  } else {
    fmt::print("errors      not reached (no output was compared)\n");
  }
  if (ev.time) {
    fmt::print("time        {}  at sizes '{}'\n", FormatMs(ev.time), ev.bench_sizes);
    fmt::print("baseline    {}\n", FormatMs(ev.baseline_time));
    if (ev.speedup)
      fmt::print("speedup     {:.3f}x over the baseline ({})\n", *ev.speedup,
                 ev.external_baselines.empty()
                     ? "same process, interleaved"
                     : "PyTorch's own runs in rounds alternating with the kernel's");
    PrintExternalBaselines(ev);
    if (ev.bandwidth_gbs) {
      fmt::print("bandwidth   {:.1f} GB/s", *ev.bandwidth_gbs);
      if (ev.roofline_fraction) {
        fmt::print(" = {:.1f}% of {:.1f} GB/s ({})", 100 * *ev.roofline_fraction, peak_gbs,
                   peak_source);
      }
      fmt::print("\n");
      WarnIfOverPeak(ev);
    }
    PrintCompute(ev, task, peak_gflops, peak_gflops_source);
  }
  if (!ev.descriptor.empty()) {
    const DescriptorSpace descriptors = DescriptorSpace::Load(DefaultDescriptorFile());
    fmt::print("cell        [{}] {}\n", fmt::join(ev.descriptor, ", "),
               descriptors.Describe(ev.descriptor));
  }
  for (const auto& h : ev.hints) fmt::print("hint        {}\n", h);
  if (ev.status == Status::kCompileError && !ev.compile_log.empty())
    fmt::print("compiler log:\n{}\n", ev.compile_log);
}

void Classify(Evaluation& ev, const Kernel& kernel, const std::string& listing) {
  if (ev.status == Status::kCompileError || ev.status == Status::kInvalidConfig) return;
  ev.descriptor = DescriptorSpace::Load(DefaultDescriptorFile())
                      .Classify(kernel.language, kernel.source, listing, ev.config);
}

// Debugging path: the evaluator runs in this process, with no isolation.
int EvalInProcess(const EvalArgs& a, const Task& task) {
  auto backends = MakeBackends();
  std::string error;
  std::unique_ptr<Device> device = OpenDevice(backends, a.device, &error);
  if (!device) throw WorkerError(error, 3);
  Kernel kernel = LoadKernelFile(ResolveTaskKernel(task, a.kernel, device->info().language()));
  CheckKernelNames(kernel, TaskSizeNames(task), ConstraintExtras());
  Config config = ParseSets(kernel, a.sets);
  CheckLanguage(kernel, device->info().language(), device->info().Selector());
  CompileCache cache(DefaultCacheDir());
  EvalOptions options;
  options.bench_sizes = a.sizes;
  options.settings = a.settings;
  options.reference_source = TorchReferenceFactory();
  Evaluator evaluator(*device, task, cache, options);
  std::string listing;
  Evaluation ev = evaluator.Evaluate(RunRequest{{kernel, config}, std::nullopt}, &listing);
  Classify(ev, kernel, listing);
  if (a.json) {
    std::cout << EvaluationToJson(ev).dump(2) << "\n";
  } else {
    PrintEvaluation(ev, task, evaluator.peak_bandwidth().gbs, evaluator.peak_bandwidth().source,
                    evaluator.peak_compute().Max(), evaluator.peak_compute().source);
  }
  return 0;
}

}  // namespace

void PrintExternalBaselines(const Evaluation& ev) {
  for (const ExternalBaseline& b : ev.external_baselines) {
    if (!b.time) {
      fmt::print("vs {:<13} unavailable: {}\n", b.name, b.unavailable);
      continue;
    }
    fmt::print("vs {:<13} {}  {:.4f} ms median ({} runs) on {}, same inputs and sizes\n", b.name,
               b.speedup ? fmt::format("{:.3f}x", *b.speedup) : std::string("-"), b.time->median_ms,
               b.time->runs, b.device);
  }
}

void WarnIfOverPeak(const Evaluation& ev) {
  if (ev.roofline_fraction && *ev.roofline_fraction > 1.0)
    fmt::print(
        "warning     over 100% of the device's peak: the peak figure is low (measure it again "
        "with --remeasure-bandwidth) or the kernel moves fewer bytes than the task's min_bytes "
        "says\n");
}

int RunEval(const EvalArgs& a, const std::string& self) {
  Task task = FindTask(a.task);
  if (a.in_process) return EvalInProcess(a, task);
  JudgeOptions options;
  options.executor = Aimed(a.executor, self, task.dir, a.device, a.sizes);
  options.executor.settings = a.settings;
  options.devices = {a.device};
  options.build_jobs = 1;            // one candidate: one builder is plenty
  DeviceJudge judge(task, options);  // opens the device in the executor, never here
  const ExecutorInfo& info = judge.info();
  Language lang = info.device.language();
  std::string kernel_path = ResolveTaskKernel(task, a.kernel, lang);
  Kernel kernel = LoadKernelFile(kernel_path);
  CheckKernelNames(kernel, TaskSizeNames(task), ConstraintExtras());
  Config config = ParseSets(kernel, a.sets);
  CheckLanguage(kernel, lang, info.device.Label());
  if (!a.json) fmt::print(stderr, "evaluating {} on {}\n", kernel_path, info.device.Label());
  JudgeResult r = judge.Evaluate({kernel, config});
  if (!r.tool_error.empty()) throw std::runtime_error(r.tool_error);
  Classify(r.evaluation, kernel, r.listing);
  if (a.json) {
    nlohmann::json out = EvaluationToJson(r.evaluation);
    out["executor"] = judge.counters().ToJson();
    std::cout << out.dump(2) << "\n";
  } else {
    PrintEvaluation(r.evaluation, task, info.peak_gbs, info.peak_source, info.peak_gflops,
                    info.peak_gflops_source);
  }
  return 0;
}

}  // namespace kf
