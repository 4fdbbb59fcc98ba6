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
#include "cli/optimize_command.hpp"
#include "cli/tune_command.hpp"
#include "core/input_error.hpp"
#include "core/task_library.hpp"
#include "eval/evaluator.hpp"
#include "eval/executor.hpp"

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
  bool in_process = false;
  kf::ExecutorOptions executor;  // deadlines and limits
};

std::string FormatMs(const std::optional<kf::TimingStats>& t) {
  if (!t) return "-";
  return fmt::format("{:.4f} ms (min {:.4f}, max {:.4f}, {} runs)", t->median_ms, t->min_ms,
                     t->max_ms, t->runs);
}

kf::Config ParseSets(const kf::Kernel& kernel, const std::vector<std::string>& sets) {
  kf::Config overrides;
  for (const std::string& s : sets) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw kf::InputError("--set", 0, s, "expected NAME=VALUE");
    overrides[s.substr(0, eq)] = s.substr(eq + 1);
  }
  return kernel.ResolveConfig(overrides);
}

void CheckLanguage(const kf::Kernel& kernel, kf::Language device_language,
                   const std::string& device) {
  if (device_language != kernel.language) {
    throw kf::InputError(kernel.path, 0, "language",
                         fmt::format("a {} kernel cannot run on {}; pick a device with --device",
                                     kf::LanguageName(kernel.language), device));
  }
}

void PrintEvaluation(const kf::Evaluation& ev, double peak_gbs, const std::string& peak_source) {
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
        fmt::print(" = {:.1f}% of {:.1f} GB/s ({})", 100 * *ev.roofline_fraction, peak_gbs,
                   peak_source);
      }
      fmt::print("\n");
    }
  }
  for (const auto& h : ev.hints) fmt::print("hint        {}\n", h);
  if (ev.status == kf::Status::kCompileError && !ev.compile_log.empty())
    fmt::print("compiler log:\n{}\n", ev.compile_log);
}

// Debugging path: the evaluator runs in this process, with no isolation.
int EvalInProcess(const EvalArgs& a, const kf::Task& task) {
  auto backends = kf::MakeBackends();
  std::string error;
  std::unique_ptr<kf::Device> device = kf::OpenDevice(backends, a.device, &error);
  if (!device) throw NoDevice(error);
  kf::Kernel kernel =
      kf::LoadKernelFile(kf::ResolveTaskKernel(task, a.kernel, device->info().language()));
  kf::Config config = ParseSets(kernel, a.sets);
  CheckLanguage(kernel, device->info().language(), device->info().Selector());
  kf::CompileCache cache(kf::DefaultCacheDir());
  kf::EvalOptions options;
  options.bench_sizes = a.sizes;
  options.check_seeds = a.seeds;
  kf::Evaluator evaluator(*device, task, cache, options);
  kf::Evaluation ev = evaluator.Evaluate(kernel, config);
  if (a.json) {
    std::cout << kf::EvaluationToJson(ev).dump(2) << "\n";
  } else {
    PrintEvaluation(ev, evaluator.peak_bandwidth().gbs, evaluator.peak_bandwidth().source);
  }
  return kExitOk;
}

std::string SelfPath() {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "kfoundry" : p.string();
}

int Eval(const EvalArgs& a) {
  kf::Task task = kf::FindTask(a.task);
  if (a.in_process) return EvalInProcess(a, task);
  kf::ExecutorOptions o = kf::Aimed(a.executor, SelfPath(), task.dir, a.device, a.sizes);
  o.seeds = a.seeds;
  kf::Supervisor supervisor(o);  // opens the device in the executor, never here
  const nlohmann::json& info = supervisor.executor_info();
  kf::Language lang =
      info.value("backend", "") == "cuda" ? kf::Language::kCuda : kf::Language::kOpenCL;
  std::string kernel_path = kf::ResolveTaskKernel(task, a.kernel, lang);
  kf::Kernel kernel = kf::LoadKernelFile(kernel_path);
  kf::Config config = ParseSets(kernel, a.sets);
  CheckLanguage(kernel, lang, info.value("device", ""));
  if (!a.json) fmt::print(stderr, "evaluating {} on {}\n", kernel_path, info.value("device", ""));
  kf::Evaluation ev = supervisor.Evaluate(kernel, config);
  if (a.json) {
    nlohmann::json out = kf::EvaluationToJson(ev);
    out["executor"] = supervisor.counters().ToJson();
    std::cout << out.dump(2) << "\n";
  } else {
    PrintEvaluation(ev, info.value("peak_gbs", 0.0), info.value("peak_source", ""));
  }
  return kExitOk;
}

int Executor(const kf::ExecutorArgs& args) {
  return kf::RunExecutor(args);
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
  eval->add_flag("--in-process", eval_args.in_process,
                 "Evaluate in this process instead of a supervised executor (debugging; a crash "
                 "or hang of the kernel then takes kfoundry with it)");
  eval->add_option("--compile-timeout", eval_args.executor.compile_timeout_s,
                   "Seconds a compile may take before it is a compile_error")
      ->capture_default_str();
  eval->add_option("--launch-factor", eval_args.executor.launch_factor,
                   "A launch may take this many times the baseline's launch time...")
      ->capture_default_str();
  eval->add_option("--launch-floor", eval_args.executor.launch_floor_s,
                   "...but at least this many seconds...")
      ->capture_default_str();
  eval->add_option("--launch-ceiling", eval_args.executor.launch_ceiling_s,
                   "...and at most this many, before it is a timeout")
      ->capture_default_str();
  eval->add_option("--memory-limit", eval_args.executor.address_space_gib,
                   "Address-space limit of the executor in GiB (0 = none; CUDA needs a large one)")
      ->capture_default_str();

  kf::TuneArgs tune_args;
  CLI::App* tune = app.add_subcommand(
      "tune",
      "Search a template's parameter space on a device, or replay a recorded space (--replay)");
  tune->add_option("TASK", tune_args.task, "A task folder or the name of a bundled task");
  tune->add_option(
      "KERNEL", tune_args.kernel,
      "A kernel template with @param annotations: a file, or a template of the task by name");
  tune->add_option(
      "--replay", tune_args.replay,
      "Answer every evaluation from a recorded space (Kernel Tuner cache JSON, .gz or not)");
  tune->add_option("--strategy", tune_args.strategy,
                   "exhaustive, random, genetic, annealing or model (default: model)");
  tune->add_option("--budget", tune_args.budget, "Evaluations to spend")->capture_default_str();
  tune->add_option("--time-budget", tune_args.seconds, "Seconds to spend (0 = no limit)");
  tune->add_option("--seed", tune_args.seed, "Random seed (the search is deterministic for a seed)")
      ->capture_default_str();
  tune->add_option("--device", tune_args.device, "Device selector, as for eval");
  tune->add_option("--sizes", tune_args.sizes, "Benchmark size set to time");
  tune->add_option("--record", tune_args.record,
                   "Write every measurement to this file in Kernel Tuner's cache format");
  tune->add_flag("--json", tune_args.json, "Print one JSON object on stdout");
  tune->add_flag("--no-rules", tune_args.no_rules,
                 "Search the whole space: apply no hardware rules");
  tune->add_option("--rules", tune_args.rules_dir,
                   "Folder of rule files (default: the bundled rules/)");
  tune->add_option("--launch-floor", tune_args.executor.launch_floor_s, "As for eval");

  kf::OptimizeArgs opt;
  CLI::App* optimize = app.add_subcommand(
      "optimize",
      "Search the space of kernels for the fastest correct one (MAP-Elites over the task's "
      "templates and their mutations, each template tuned), recorded in a store so a killed run "
      "resumes");
  optimize->add_option("TASK", opt.task, "A task folder or the name of a bundled task");
  optimize->add_option("--budget", opt.budget, "Evaluations to spend, the baseline's included")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  optimize->add_option("--time-budget", opt.seconds, "Seconds to spend searching (0 = no limit)");
  optimize
      ->add_option("--tune-budget", opt.tune_budget,
                   "Evaluations the tuner spends on each proposed template")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  optimize->add_option("--proposer", opt.proposer, "Where kernels come from: builtin")
      ->capture_default_str();
  optimize
      ->add_option("--selection", opt.selection,
                   "Parent selection: uniform, curiosity, fitness or gradient")
      ->capture_default_str();
  optimize->add_option("--strategy", opt.strategy,
                       "Tuning strategy for each template (default: model)");
  optimize->add_option("--device", opt.device, "Device selector, as for eval");
  optimize->add_option("--sizes", opt.sizes, "Benchmark size set to time");
  optimize->add_option("--store", opt.store, "Where the run is recorded: sqlite:PATH")
      ->capture_default_str();
  optimize->add_option("--run", opt.run, "Name of the run (default: TASK-DATE-TIME)");
  optimize->add_option("--resume", opt.resume,
                       "Continue the named run (killed or finished) with its stored settings; "
                       "nothing stored is judged again");
  optimize->add_flag("--continue", opt.resume_flag, "Continue the run named by --run");
  optimize->add_option("--seed", opt.seed, "Random seed")->capture_default_str();
  optimize->add_option("--top", opt.top, "Elites re-verified at the end")->capture_default_str();
  optimize->add_option("--repeats", opt.repeats, "Re-verifications of each")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  optimize
      ->add_option("--out", opt.out_dir,
                   "Folder for the best kernel's source (OUT/RUN/best.cu|.cl)")
      ->capture_default_str();
  optimize
      ->add_option("--compile-ahead", opt.compile_ahead,
                   "Compile the next candidates in a second executor while one is timed: "
                   "auto (on GPUs), on, off")
      ->capture_default_str();
  optimize->add_flag("--no-rules", opt.no_rules, "Apply no hardware rules when tuning");
  optimize->add_option("--rules", opt.rules_dir, "Folder of rule files");
  optimize->add_option("--launch-floor", opt.executor.launch_floor_s, "As for eval");
  optimize->add_flag("--json", opt.json, "Print one JSON object on stdout (progress on stderr)");

  kf::ExecutorArgs exec_args;
  CLI::App* executor =
      app.add_subcommand("executor", "Internal: the supervised evaluation process");
  executor->group("");  // hidden from --help
  executor->add_option("--task", exec_args.options.task)->required();
  executor->add_option("--device", exec_args.options.device);
  executor->add_option("--sizes", exec_args.options.sizes);
  executor->add_option("--seeds", exec_args.options.seeds);
  executor->add_option("--warmup-runs", exec_args.options.warmup_runs);
  executor->add_option("--min-runs", exec_args.options.min_runs);
  executor->add_option("--max-runs", exec_args.options.max_runs);
  executor->add_option("--min-timed-ms", exec_args.options.min_timed_ms);
  executor->add_option("--baseline-ms", exec_args.baseline_ms);
  executor->add_option("--limit-as-gib", exec_args.options.address_space_gib);
  executor->add_option("--limit-cpu-s", exec_args.options.cpu_seconds);
  executor->add_option("--parent", exec_args.parent);

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
    if (*executor) return Executor(exec_args);
    if (*tune) return kf::RunTune(tune_args, SelfPath());
    if (*optimize) return kf::RunOptimize(opt, SelfPath());
  } catch (const kf::ExecutorError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return e.exit_code();
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
