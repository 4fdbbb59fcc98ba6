// kfoundry: the command line (DESIGN.md "The command line" is the contract).
// Exit codes: 0 success (for eval: the kernel was judged, whatever its status), 2 bad usage or bad
// input files, 3 no usable device, 1 anything else.

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "backend/registry.hpp"
#include "cli/eval_command.hpp"
#ifdef KF_HAVE_DIST
#include "cli/cluster_commands.hpp"
#endif
#include "cli/export_command.hpp"
#include "cli/import_command.hpp"
#include "cli/optimize_command.hpp"
#include "cli/report_command.hpp"
#include "cli/suite_command.hpp"
#include "cli/tune_command.hpp"
#include "core/codec.hpp"
#include "core/input_error.hpp"
#include "core/task_library.hpp"
#include "eval/executor_main.hpp"
#include "host/builder.hpp"
#include "torch/torch_reference.hpp"

namespace {

constexpr int kExitOk = 0, kExitFailure = 1, kExitBadInput = 2, kExitNoDevice = 3;

int Devices(bool json) {
  auto backends = kf::MakeBackends();
  kf::DeviceListing listing = kf::ListDevices(backends);
  if (json) {
    nlohmann::json out = {{"devices", nlohmann::json::array()}, {"notes", listing.notes}};
    for (const auto& d : listing.devices) out["devices"].push_back(kf::DeviceInfoToJson(d));
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
    for (const auto& t : tasks) out["tasks"].push_back(kf::TaskToJson(t));
    std::cout << out.dump(2) << "\n";
  } else {
    for (const auto& t : tasks) {
      std::string langs;
      for (kf::Language l : t.Languages())
        langs += (langs.empty() ? "" : ", ") + std::string(kf::LanguageName(l));
      fmt::print("{:<16} {:<10} [{}]  {}\n", t.name, t.op_class, langs, t.description);
      for (const std::string& v : t.variants) fmt::print("  {}\n", kf::JoinTaskVariant(t.name, v));
    }
    if (tasks.empty())
      fmt::print(stderr,
                 "no bundled tasks found (looked in $KF_TASKS_DIR and next to the binary)\n");
  }
  return kExitOk;
}

// How thoroughly candidates are judged: the same flags for eval, tune and optimize (each with
// its own defaults: thorough for eval, fast inside a search).
void AddEvalSettings(CLI::App* app, kf::EvalSettings& s) {
  app->add_flag_callback(
      "--remeasure-bandwidth",
      [] {
        // The executors this invocation starts inherit it; the first measures, the rest reuse.
        std::string token = fmt::format("{}-{}", getpid(), std::time(nullptr));
        setenv("KF_REMEASURE_BANDWIDTH", token.c_str(), 1);
      },
      "Measure the device's peak copy bandwidth again instead of using the cached figure");
  app->add_option("--check-seeds,--seeds", s.check_seeds, "Fresh random seeds per check size set")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  app->add_option("--runs", s.max_runs, "Most timed runs of a candidate")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app->add_option("--warmup", s.warmup_runs, "Untimed runs before the timed ones")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  app->add_option(
         "--max-timing-ms", s.max_timing_ms,
         "Stop timing a candidate once the timing has taken this long, in wall time (0 = no cap)")
      ->capture_default_str();
  app->add_option("--check-on", s.check_on,
                  "Where inputs are drawn and outputs compared: device, or host (slow; a debug "
                  "mode and the device checks' oracle)")
      ->capture_default_str()
      ->check(CLI::IsMember({"device", "host"}));
}

// How a search runs, for optimize, coordinator and each task of a suite.
void AddSearchOptions(CLI::App* app, kf::OptimizeArgs& opt) {
  app->add_option("--budget", opt.settings.search.budget,
                  "Evaluations to spend, the baseline's included")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  app->add_option("--time-budget", opt.settings.search.seconds,
                  "Seconds to spend searching (0 = no limit)");
  app->add_option("--tune-budget", opt.settings.search.tune_budget,
                  "Evaluations the tuner spends on each proposed template")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app->add_option("--proposer", opt.settings.proposer.kind,
                  "Where kernels come from: builtin (the task's templates and source mutations), "
                  "llm (a chat-completions model: --llm-*) or command (an executable: "
                  "--proposer-cmd)")
      ->capture_default_str();
  app->add_option("--proposer-cmd", opt.settings.proposer.command,
                  "For --proposer command: \"PROGRAM ARGS\", run by /bin/sh -c once per "
                  "proposal; reads a JSON request on stdin, writes a kernel on stdout "
                  "(docs/proposers.md)");
  app->add_option("--proposer-timeout", opt.settings.proposer.timeout_s,
                  "Seconds a proposer reply may take before it is a bad reply")
      ->capture_default_str();
  const std::string llm_group = "LLM proposer (docs/llm.md)";
  app->add_option("--llm-base-url", opt.settings.proposer.llm.base_url,
                  "Chat-completions server, e.g. http://127.0.0.1:8000/v1 (else "
                  "KFOUNDRY_LLM_BASE_URL, OPENAI_BASE_URL)")
      ->group(llm_group);
  app->add_option("--llm-model", opt.settings.proposer.llm.model,
                  "Model name (else KFOUNDRY_LLM_MODEL)")
      ->group(llm_group);
  app->add_option("--llm-api-key", opt.llm_api_key,
                  "API key (better: KFOUNDRY_LLM_API_KEY or OPENAI_API_KEY); never stored")
      ->group(llm_group);
  app->add_option("--llm-models", opt.settings.proposer.llm.models_file,
                  "TOML file of several models with weights, prices and settings (an ensemble)")
      ->group(llm_group);
  app->add_option("--llm-temperature", opt.settings.proposer.llm.temperature,
                  "Sampling temperature")
      ->group(llm_group);
  app->add_option("--llm-max-tokens", opt.settings.proposer.llm.max_tokens, "Reply token limit")
      ->group(llm_group);
  app->add_option("--llm-reply", opt.settings.proposer.llm.reply,
                  "What the model answers: file (a whole kernel) or diff (SEARCH/REPLACE blocks "
                  "against the parent)")
      ->capture_default_str()
      ->group(llm_group);
  app->add_option("--llm-timeout", opt.settings.proposer.llm.timeout_s,
                  "Seconds one request may take")
      ->capture_default_str()
      ->group(llm_group);
  app->add_option("--llm-retries", opt.settings.proposer.llm.retries,
                  "Retries of a request after a 429, a 5xx or a dropped connection")
      ->capture_default_str()
      ->check(CLI::Range(0, 20))
      ->group(llm_group);
  app->add_option("--llm-concurrency", opt.settings.proposer.llm.concurrency,
                  "Requests at once (default: --in-flight)")
      ->group(llm_group);
  app->add_option("--llm-tpm", opt.settings.proposer.llm.tokens_per_minute,
                  "Tokens per minute (0 = no limit)")
      ->group(llm_group);
  app->add_option("--max-cost", opt.settings.proposer.llm.max_cost,
                  "Stop asking once the run's model cost reaches this many USD (0 = no limit)")
      ->group(llm_group);
  app->add_option("--prompts", opt.settings.proposer.llm.prompts_dir,
                  "Folder of the prompt library")
      ->group(llm_group);
  app->add_flag_callback(
         "--no-meta", [&opt] { opt.settings.proposer.llm.meta = false; },
         "Never rewrite prompt components (the meta step)")
      ->group(llm_group);
  app->add_option("--meta-every", opt.settings.proposer.llm.meta_every,
                  "Proposals between meta steps that rewrite the weakest prompt component")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000))
      ->group(llm_group);
  app->add_option("--meta-min-uses", opt.settings.proposer.llm.meta_min_uses,
                  "Graded uses a component needs before the meta step may rewrite it")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000))
      ->group(llm_group);
  app->add_option("--in-flight", opt.settings.search.in_flight,
                  "Proposals out at once (1 keeps one order for a seed)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  app->add_option("--build-jobs", opt.build_jobs,
                  "Builder processes compiling offline where the backend can (CUDA): 0 = one "
                  "per core, -1 = none (compile in the executor)")
      ->capture_default_str();
  app->add_option("--selection", opt.settings.search.selection,
                  "Parent selection: uniform, curiosity, fitness or gradient")
      ->capture_default_str();
  app->add_option("--strategy", opt.settings.search.strategy,
                  "Tuning strategy for each template (default: model)");
  app->add_option("--device", opt.settings.device,
                  "Device selector, as for eval; several devices, one runner each: "
                  "cuda:0,cuda:1 or cuda:all (each candidate is timed against the baseline "
                  "on the device that ran it)");
  app->add_option("--sizes", opt.settings.sizes, "Benchmark size set to time");
  app->add_option("--store", opt.store,
                  "Where the run is recorded: sqlite:PATH or postgresql://USER@HOST:PORT/DB "
                  "(its password from PGPASSWORD or ~/.pgpass, never here)")
      ->capture_default_str();
  app->add_option("--seed", opt.settings.search.seed, "Random seed")->capture_default_str();
  app->add_option("--top", opt.settings.final.top, "Elites re-verified at the end")
      ->capture_default_str();
  app->add_option("--repeats", opt.settings.final.repeats, "Re-verifications of each")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  app->add_option("--out", opt.settings.out_dir,
                  "Folder for the best kernel's source (OUT/RUN/best.cu|.cl; default "
                  "kfoundry-out, or the resumed run's)");
  app->add_flag_callback(
      "--no-rules", [&opt] { opt.settings.search.use_rules = false; },
      "Apply no hardware rules when tuning");
  app->add_option("--rules", opt.settings.search.rules_dir, "Folder of rule files");
  app->add_option("--launch-floor", opt.executor.launch_floor_s, "As for eval");
  AddEvalSettings(app, opt.settings.judging);
  app->add_option("--compile-timeout", opt.executor.compile_timeout_s, "As for eval")
      ->capture_default_str();
  app->add_flag("--json", opt.json, "Print one JSON object on stdout (progress on stderr)");
}

// optimize's options, which coordinator shares.
void AddOptimizeOptions(CLI::App* app, kf::OptimizeArgs& opt) {
  app->add_option("TASK", opt.task, "A task folder or the name of a bundled task");
  AddSearchOptions(app, opt);
  app->add_option("--run", opt.run,
                  "Name of the run: letters, digits, . _ - (default: TASK-DATE-TIME)");
  app->add_option("--resume", opt.resume,
                  "Continue the named run (killed or finished) with its stored settings; "
                  "nothing stored is judged again");
  app->add_flag("--continue", opt.resume_flag, "Continue the run named by --run");
}

std::string SelfPath() {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "kfoundry" : p.string();
}

}  // namespace

int main(int argc, char** argv) {
  // A worker or a proposer command that exits without reading its input must not take kfoundry
  // with it: writes to it fail with EPIPE instead, and the caller turns that into a verdict.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"KernelFoundry: finds fast, correct GPU kernels for a task on a device"};
  app.require_subcommand(1);
  bool json = false;

  CLI::App* devices =
      app.add_subcommand("devices", "List the devices of every backend with their properties");
  devices->add_flag("--json", json, "Print one JSON object on stdout");

  CLI::App* tasks = app.add_subcommand("tasks", "List the bundled task library");
  tasks->add_flag("--json", json, "Print one JSON object on stdout");

  kf::EvalArgs eval_args;
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
  AddEvalSettings(eval, eval_args.settings);
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
  tune->add_option("--device", tune_args.device,
                   "Device selector, as for eval; several run configurations side by side: "
                   "cuda:0,cuda:1 or cuda:all");
  tune->add_option("--sizes", tune_args.sizes, "Benchmark size set to time");
  tune->add_option("--record", tune_args.record,
                   "Write every measurement to this file in Kernel Tuner's cache format");
  tune->add_flag("--json", tune_args.json, "Print one JSON object on stdout");
  tune->add_flag("--no-rules", tune_args.no_rules,
                 "Search the whole space: apply no hardware rules");
  tune->add_option("--rules", tune_args.rules_dir,
                   "Folder of rule files (default: the bundled rules/)");
  tune->add_option("--launch-floor", tune_args.executor.launch_floor_s, "As for eval");
  AddEvalSettings(tune, tune_args.settings);

  kf::OptimizeArgs opt;
  CLI::App* optimize = app.add_subcommand(
      "optimize",
      "Search the space of kernels for the fastest correct one (MAP-Elites over what the proposer "
      "writes, each template tuned, several proposals and devices at once), recorded in a store "
      "so a killed run resumes");
  AddOptimizeOptions(optimize, opt);

  kf::SuiteArgs suite_args;
  CLI::App* suite = app.add_subcommand(
      "suite",
      "optimize each of a set of tasks with one budget each, then print KernelBench's figures: "
      "the correctness rate, fast_0, fast_1 and fast_2 against PyTorch eager (a task without a "
      "PyTorch reference: its baseline kernel) and against torch.compile, the geometric-mean "
      "speedup, the mean roofline fraction and a table of the problems (docs/pytorch.md \"The "
      "suite\"); each task a run named NAME-TASK in the store, so --resume continues them");
  suite
      ->add_option("DIR", suite_args.dirs,
                   "A task folder (it holds a task.toml), a folder of task folders (each "
                   "subfolder with a task.toml, in name order) or a bundled task's name")
      ->required();
  AddSearchOptions(suite, suite_args.search);
  suite
      ->add_option("--name", suite_args.name,
                   "The suite's name: each task's run is NAME-TASK (letters, digits, . _ -)")
      ->capture_default_str();
  suite->add_flag("--resume", suite_args.resume,
                  "Continue the suite: each task's run that the store holds goes on with its "
                  "stored settings (a finished one judges nothing), the others start");

#ifdef KF_HAVE_DIST
  // The distributed roles (docs/distributed.md): the same search, its candidates judged by run
  // workers over a RabbitMQ broker.
  kf::CoordinatorArgs coord_args;
  CLI::App* coordinator = app.add_subcommand(
      "coordinator",
      "optimize with its candidates judged by run workers (kfoundry worker) on other hosts or "
      "devices, over a RabbitMQ broker (--queue); the same options, output, store and --resume "
      "as optimize");
  AddOptimizeOptions(coordinator, coord_args.optimize);
  coordinator
      ->add_option("--queue", coord_args.queue,
                   "The broker: amqp://USER@HOST:PORT/VHOST (password from "
                   "KFOUNDRY_AMQP_PASSWORD, never here)")
      ->capture_default_str();
  coordinator
      ->add_option("--wait-workers", coord_args.wait_s,
                   "Seconds to wait for a run worker of the --device kind to send a heartbeat")
      ->capture_default_str();
  kf::WorkerArgs worker_args;
  CLI::App* worker = app.add_subcommand(
      "worker",
      "Serve coordinators: judge the run jobs of this host's device kind (--role run), compile "
      "CUDA jobs (--role build) or do proposers' commands and chat requests (--role propose) "
      "until SIGTERM or Ctrl-C, then finish the jobs taken and leave");
  worker
      ->add_option("--role", worker_args.role,
                   "run (judges a device kind's jobs on --device), build (compiles CUDA jobs "
                   "for the run workers) or propose (does the command and llm proposers' "
                   "commands and chat requests, with this host's model keys)")
      ->capture_default_str()
      ->check(CLI::IsMember({"run", "build", "propose"}));
  worker->add_option("--device", worker_args.device,
                     "Device selector, as for optimize; several of one kind: cuda:0,cuda:1 or "
                     "cuda:all");
  worker
      ->add_option("--store", worker_args.store,
                   "The coordinator's store (task bundles, heartbeats): sqlite:PATH on one host, "
                   "postgresql://USER@HOST:PORT/DB across hosts")
      ->capture_default_str();
  worker
      ->add_option("--queue", worker_args.queue,
                   "The broker: amqp://USER@HOST:PORT/VHOST (password from "
                   "KFOUNDRY_AMQP_PASSWORD, never here)")
      ->capture_default_str();
  worker->add_option("--cache", worker_args.cache_dir,
                     "Folder for the tasks' bundles (default: the compile cache's folder/tasks)");
  worker->add_option("--heartbeat", worker_args.heartbeat_s, "Seconds between heartbeats")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 60.0));
  worker
      ->add_option("--build-jobs", worker_args.build_jobs,
                   "Builder processes (CUDA): 0 = one per core, -1 = none (a run worker then "
                   "compiles in its executors)")
      ->capture_default_str();
  worker
      ->add_option("--concurrency", worker_args.concurrency,
                   "propose: jobs done at once (chat requests wait on the model, not this host)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  worker->add_option("--llm-models", worker_args.llm_models,
                     "propose: a models file (as optimize's) of the models this worker holds: a "
                     "chat request for one of them goes where the file says, with its key");
  worker->add_option("--llm-base-url", worker_args.llm_base_url,
                     "propose: the one model this worker holds, as optimize's option");
  worker->add_option("--llm-model", worker_args.llm_model,
                     "propose: the one model this worker holds, as optimize's option (keys: "
                     "KFOUNDRY_LLM_API_KEY or OPENAI_API_KEY, never a flag)");
  worker->add_flag("--fake", worker_args.fake,
                   "Serve a fake device instead: each verdict a function of the candidate's source "
                   "and configuration, at once (tests and benchmarks of the transport; "
                   "coordinator --device fake; with --device cuda a fake CUDA device, whose jobs "
                   "go through build workers)");
  worker->add_option("--launch-floor", worker_args.executor.launch_floor_s, "As for eval");
  worker->add_option("--compile-timeout", worker_args.executor.compile_timeout_s, "As for eval")
      ->capture_default_str();

  kf::StatusArgs status_args;
  CLI::App* status = app.add_subcommand(
      "status", "The workers (heartbeats, jobs done), the broker's queues and the runs of a store");
  status->add_option("--store", status_args.store, "The store: sqlite:PATH or postgresql://...")
      ->capture_default_str();
  status->add_option("--queue", status_args.queue,
                     "The broker, for the queues' depths (amqp://USER@HOST:PORT/VHOST)");
  status->add_flag("--json", status_args.json, "Print one JSON object on stdout");
#endif

  kf::ReportArgs report_args;
  CLI::App* report = app.add_subcommand(
      "report",
      "Write one run as a self-contained HTML file: archive heat maps, progress, roofline, "
      "lineage, every kernel with its evaluations (opens offline)");
  report
      ->add_option("RUN", report_args.run,
                   "The run's name (a name the store lacks is answered with the names it has)")
      ->required();
  report
      ->add_option("--store", report_args.store,
                   "The store the run is in: sqlite:PATH or postgresql://...")
      ->capture_default_str();
  report->add_option("-o,--out", report_args.out, "The HTML file to write (default: RUN.html)");

  kf::ServeOptions serve_options;
  CLI::App* serve = app.add_subcommand(
      "serve",
      "Serve every run of a store as a live dashboard (the report's views, refreshed as "
      "evaluations land) with JSON endpoints under /api/ (docs/report.md)");
  serve
      ->add_option("--store", serve_options.store_url,
                   "The store to show: sqlite:PATH or postgresql://...")
      ->capture_default_str();
  serve->add_option("--port", serve_options.port, "TCP port (0: any free port, printed)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  serve
      ->add_option("--host", serve_options.host,
                   "Address to listen on (127.0.0.1: this machine only; 0.0.0.0: every "
                   "interface, where every request must bring a token: $KFOUNDRY_SERVE_TOKEN, "
                   "else one made and printed at start)")
      ->capture_default_str();

  kf::ImportOptions import_options;
  CLI::App* import_cmd = app.add_subcommand(
      "import",
      "Write a task folder from a PyTorch problem in KernelBench's form (class Model, "
      "get_inputs(), get_init_inputs(), module-level size constants), the problem as its "
      "reference (docs/pytorch.md; needs python3 with PyTorch)");
  import_cmd->add_option("PROBLEM", import_options.problem, "The problem's .py file")->required();
  import_cmd->add_option("-o,--out", import_options.out_dir,
                         "The task folder to write (default: ./NAME, NAME the file's stem)");
  import_cmd
      ->add_option("--timeout", import_options.timeout_s,
                   "Seconds the inspection of the problem (Python) may take")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 86400.0));

  kf::ExportArgs export_args;
  CLI::App* export_cmd = app.add_subcommand(
      "export",
      "Write a run's best kernel as a Python module (--torch): KernelBench's ModelNew (Model's "
      "constructor and forward) and a torch.library op that launch that kernel and "
      "configuration, the launch rule computed from the tensors' shapes; OpenCL kernels run "
      "through pyopencl, CUDA kernels are compiled by torch's load_inline (docs/pytorch.md)");
  export_cmd->add_option("RUN", export_args.run, "The run's name")->required();
  export_cmd->add_flag("--torch", export_args.torch,
                       "Export as a PyTorch module (the task needs a PyTorch reference)");
  export_cmd->add_option("--store", export_args.store, "The store the run is in")
      ->capture_default_str();
  export_cmd->add_option("-o,--out", export_args.out,
                         "The .py file to write (default: RUN.py, made an importable name)");

  kf::ExecutorArgs exec_args;
  CLI::App* executor =
      app.add_subcommand("executor", "Internal: the supervised evaluation process");
  executor->group("");  // hidden from --help
  executor->add_option("--task", exec_args.options.task)->required();
  executor->add_option("--device", exec_args.options.device);
  executor->add_option("--sizes", exec_args.options.sizes);
  executor->add_option("--settings", exec_args.settings_json);
  executor->add_option("--baseline-ms", exec_args.baseline_ms);
  executor->add_option("--limit-as-gib", exec_args.options.address_space_gib);
  executor->add_option("--limit-cpu-s", exec_args.options.cpu_seconds);
  executor->add_option("--parent", exec_args.parent);
  exec_args.reference_source = kf::TorchReferenceFactory();  // a PyTorch module as the reference

  kf::BuilderArgs builder_args;
  CLI::App* builder = app.add_subcommand("builder", "Internal: a compile process of the pool");
  builder->group("");  // hidden from --help
  builder->add_option("--target", builder_args.target_json)->required();
  builder->add_option("--parent", builder_args.parent);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }

  try {
    if (*devices) return Devices(json);
    if (*tasks) return Tasks(json);
    if (*eval) return kf::RunEval(eval_args, SelfPath());
    if (*executor) return kf::RunExecutor(exec_args);
    if (*builder) return kf::RunBuilder(builder_args);
    if (*tune) return kf::RunTune(tune_args, SelfPath());
    if (*optimize) return kf::RunOptimize(opt, SelfPath());
    if (*suite) return kf::RunSuite(suite_args, SelfPath());
#ifdef KF_HAVE_DIST
    if (*coordinator) return kf::RunCoordinator(coord_args);
    if (*worker) return kf::RunWorkerCommand(worker_args, SelfPath());
    if (*status) return kf::RunStatus(status_args);
#endif
    if (*report) return kf::RunReport(report_args);
    if (*serve) return kf::RunServe(serve_options);
    if (*import_cmd) return kf::RunImport(import_options);
    if (*export_cmd) return kf::RunExport(export_args);
  } catch (const kf::WorkerError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return e.exit_code();
  } catch (const kf::InputError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return kExitFailure;
  }
  return kExitFailure;
}
