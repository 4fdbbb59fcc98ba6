// kfoundry: the command line (DESIGN.md "The command line" is the contract).
// Exit codes: 0 success (for eval: the kernel was judged, whatever its status), 2 bad usage or bad
// input files, 3 no usable device, 1 anything else.

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "backend/registry.hpp"
#include "cli/json_output.hpp"
#include "core/input_error.hpp"
#include "core/task_library.hpp"
#include "eval/evaluator.hpp"

namespace {

constexpr int kExitOk = 0, kExitFailure = 1, kExitBadInput = 2, kExitNoDevice = 3;

class NoDevice : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

int Devices(bool json) {
  auto backends = kf::MakeBackends();
  kf::DeviceListing listing = kf::ListDevices(backends);
  if (json) {
    nlohmann::json out = {{"devices", nlohmann::json::array()}, {"notes", listing.notes}};
    for (const auto& d : listing.devices) out["devices"].push_back(kf::DeviceJson(d));
    std::cout << out.dump(2) << "\n";
  } else {
    for (const auto& d : listing.devices) {
      fmt::print("{:<10} {} [{}, {}, {}]\n", d.Selector(), d.name,
                 kf::DeviceClassName(d.device_class), d.arch, d.driver_version);
      fmt::print(
          "           {} compute units, max work-group {}, local memory {} KiB, sub-group {}, "
          "memory {:.1f} GiB\n",
          d.compute_units, d.max_work_group_size, d.local_mem_bytes / 1024, d.sub_group_width,
          static_cast<double>(d.global_mem_bytes) / (1 << 30));
    }
    for (const auto& n : listing.notes) fmt::print("({})\n", n);
  }
  return listing.devices.empty() ? kExitNoDevice : kExitOk;
}

int Tasks(bool json) {
  std::vector<kf::Task> tasks = kf::BundledTasks();
  if (json) {
    nlohmann::json out = {{"tasks", nlohmann::json::array()}};
    for (const auto& t : tasks) out["tasks"].push_back(kf::TaskJson(t));
    std::cout << out.dump(2) << "\n";
  } else {
    for (const auto& t : tasks) {
      std::string langs;
      for (kf::Language l : t.Languages())
        langs += (langs.empty() ? "" : ", ") + std::string(kf::LanguageName(l));
      fmt::print("{:<16} {:<10} [{}]  {}\n", t.name, t.op_class, langs, t.description);
    }
    if (tasks.empty())
      fmt::print(stderr,
                 "no bundled tasks found (looked in $KF_TASKS_DIR and next to the binary)\n");
  }
  return kExitOk;
}

struct EvalArgs {
  std::string task, kernel, device, sizes;
  std::vector<std::string> sets;
  int seeds = 2;
  bool json = false;
};

std::string FormatMs(const std::optional<kf::TimingStats>& t) {
  if (!t) return "-";
  return fmt::format("{:.4f} ms (min {:.4f}, max {:.4f}, {} runs)", t->median_ms, t->min_ms,
                     t->max_ms, t->runs);
}

// KERNEL is a file, or the name of one of the task's own kernels in the device's language:
// "baseline", "reference", or a template's file stem ("rope_vec8").
std::string ResolveKernelPath(const kf::Task& task, const std::string& kernel, kf::Language lang) {
  if (std::filesystem::exists(kernel)) return kernel;
  auto lookup = [&](const std::map<kf::Language, std::string>& files) -> std::string {
    auto it = files.find(lang);
    return it == files.end() ? "" : task.PathOf(it->second);
  };
  if (kernel == "baseline" && !lookup(task.baseline).empty()) return lookup(task.baseline);
  if (kernel == "reference" && !lookup(task.reference).empty()) return lookup(task.reference);
  std::string known = "baseline, reference";
  if (auto it = task.templates.find(lang); it != task.templates.end()) {
    for (const std::string& f : it->second) {
      std::string stem = std::filesystem::path(f).stem().string();
      if (stem == kernel) return task.PathOf(f);
      known += ", " + stem;
    }
  }
  throw kf::InputError(kernel, 0, "KERNEL",
                       fmt::format("no such file, nor a {} kernel of task '{}' ({})",
                                   kf::LanguageName(lang), task.name, known));
}

int Eval(const EvalArgs& a) {
  kf::Task task = kf::FindTask(a.task);
  auto backends = kf::MakeBackends();
  std::string error;
  std::unique_ptr<kf::Device> device = kf::OpenDevice(backends, a.device, &error);
  if (!device) throw NoDevice(error);

  std::string kernel_path = ResolveKernelPath(task, a.kernel, device->info().language());
  kf::Kernel kernel = kf::LoadKernelFile(kernel_path);
  kf::CheckKernelSignature(task, kernel);
  kf::Config overrides;
  for (const std::string& s : a.sets) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw kf::InputError("--set", 0, s, "expected NAME=VALUE");
    overrides[s.substr(0, eq)] = s.substr(eq + 1);
  }
  kf::Config config = kernel.ResolveConfig(overrides);
  if (device->info().language() != kernel.language) {
    throw kf::InputError(
        kernel_path, 0, "language",
        fmt::format("a {} kernel cannot run on {} ({}); pick a device with --device",
                    kf::LanguageName(kernel.language), device->info().Selector(),
                    device->info().name));
  }
  kf::CompileCache cache(kf::DefaultCacheDir());
  kf::EvalOptions options;
  options.bench_sizes = a.sizes;
  options.check_seeds = a.seeds;
  if (!a.json)
    fmt::print(stderr, "evaluating {} on {} ({})\n", kernel_path, device->info().Selector(),
               device->info().name);
  kf::Evaluator evaluator(*device, task, cache, options);
  kf::Evaluation ev = evaluator.Evaluate(kernel, config);
  if (a.json) {
    std::cout << kf::EvaluationJson(ev).dump(2) << "\n";
    return kExitOk;
  }
  fmt::print("status      {}{}\n", kf::StatusName(ev.status),
             ev.reason.empty() ? "" : ": " + ev.reason);
  fmt::print("device      {}\n", ev.device);
  fmt::print("config      {}\n", kf::ConfigToString(ev.config));
  fmt::print("errors      max abs {:.3g}, max rel {:.3g}, bad ratio {:.3g}, NaN {}\n",
             ev.max_abs_err, ev.max_rel_err, ev.bad_ratio, ev.nan_count);
  if (ev.time) {
    fmt::print("time        {}  at sizes '{}'\n", FormatMs(ev.time), ev.bench_sizes);
    fmt::print("baseline    {}\n", FormatMs(ev.baseline_time));
    if (ev.speedup)
      fmt::print("speedup     {:.3f}x over the baseline (same process, interleaved)\n",
                 *ev.speedup);
    if (ev.bandwidth_gbs) {
      fmt::print("bandwidth   {:.1f} GB/s", *ev.bandwidth_gbs);
      if (ev.roofline_fraction) {
        fmt::print(" = {:.1f}% of {:.1f} GB/s ({})", 100 * *ev.roofline_fraction,
                   evaluator.peak_bandwidth().gbs, evaluator.peak_bandwidth().source);
      }
      fmt::print("\n");
    }
  }
  for (const auto& h : ev.hints) fmt::print("hint        {}\n", h);
  if (ev.status == kf::Status::kCompileError && !ev.compile_log.empty())
    fmt::print("compiler log:\n{}\n", ev.compile_log);
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"KernelFoundry: finds fast, correct GPU kernels for a task on a device"};
  app.require_subcommand(1);
  bool json = false;

  CLI::App* devices =
      app.add_subcommand("devices", "List the devices of every backend with their properties");
  devices->add_flag("--json", json, "Print one JSON object on stdout");

  CLI::App* tasks = app.add_subcommand("tasks", "List the bundled task library");
  tasks->add_flag("--json", json, "Print one JSON object on stdout");

  EvalArgs eval_args;
  CLI::App* eval = app.add_subcommand(
      "eval", "Compile, check and time one kernel against a task's reference and baseline");
  eval->add_option("TASK", eval_args.task, "A task folder or the name of a bundled task")
      ->required();
  eval->add_option("KERNEL", eval_args.kernel,
                   "A kernel source file (.cu or .cl), or one of the task's own kernels by name "
                   "(baseline, reference, a template's file stem) in the device's language")
      ->required();
  eval->add_option("--set", eval_args.sets, "Set a @param: NAME=VALUE (repeatable)");
  eval->add_option("--device", eval_args.device,
                   "cuda, opencl, cuda:0, opencl:1 or part of a device name (default: first CUDA "
                   "device, else first OpenCL)");
  eval->add_option("--sizes", eval_args.sizes,
                   "Benchmark size set to time (default: chosen by device class)");
  eval->add_option("--seeds", eval_args.seeds, "Fresh random seeds per check size set")
      ->check(CLI::Range(1, 100));
  eval->add_flag("--json", eval_args.json, "Print one JSON object on stdout (logs go to stderr)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }

  try {
    if (*devices) return Devices(json);
    if (*tasks) return Tasks(json);
    if (*eval) return Eval(eval_args);
  } catch (const kf::InputError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return kExitBadInput;
  } catch (const NoDevice& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return kExitNoDevice;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return kExitFailure;
  }
  return kExitFailure;
}
