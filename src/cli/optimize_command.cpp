#include "cli/optimize_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/device_context.hpp"
#include "core/evaluation_json.hpp"
#include "core/input_error.hpp"
#include "core/task_library.hpp"
#include "eval/compile_ahead.hpp"
#include "propose/builtin/builtin_proposer.hpp"
#include "search/classifier.hpp"
#include "search/search_loop.hpp"
#include "store/store.hpp"
#include "tune/strategy.hpp"

namespace kf {

namespace {

namespace fs = std::filesystem;

class SupervisorJudge : public Judge {
 public:
  SupervisorJudge(Supervisor& s, CompileAhead* ahead) : s_(s), ahead_(ahead) {}
  Evaluation Evaluate(const Kernel& kernel, const Config& config) override {
    return s_.Evaluate(kernel, config);
  }
  void Expect(const Kernel& kernel, const std::vector<Config>& configs) override {
    if (!ahead_) return;
    std::vector<std::pair<Kernel, Config>> next;
    for (const Config& c : configs) next.emplace_back(kernel, c);
    ahead_->Replace(std::move(next));
  }

 private:
  Supervisor& s_;
  CompileAhead* ahead_;
};

// A rewritten line on a terminal; a plain line every 10 evaluations otherwise.
class ProgressLine {
 public:
  explicit ProgressLine(int every) : tty_(isatty(2)), every_(every) {}
  void operator()(const SearchProgress& p) {
    if (p.evaluations == last_) return;
    last_ = p.evaluations;
    if (!tty_ && p.evaluations % every_ != 0 && p.evaluations != p.budget) return;
    double rate = p.seconds > 0 ? p.judged_now / p.seconds : 0;
    std::string eta = rate > 0 ? fmt::format("{:.0f} s", (p.budget - p.evaluations) / rate) : "-";
    fmt::print(stderr,
               "{}optimize: {}/{} evaluations, {} proposals, best {:.2f}x, {} cells, "
               "{:.2f} eval/s, ETA {}{}",
               tty_ ? "\r" : "", p.evaluations, p.budget, p.proposals, p.best_speedup, p.cells,
               rate, eta, tty_ ? "   " : "\n");
    std::fflush(stderr);
  }
  void Finish() const {
    if (tty_ && last_ >= 0) fmt::print(stderr, "\n");
  }

 private:
  bool tty_;
  int every_, last_ = -1;
};

std::string DefaultRunName(const std::string& task) {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%d-%H%M%S", std::gmtime(&t));
  return task + "-" + buf;
}

nlohmann::json SettingsJson(const OptimizeArgs& a) {
  return {{"budget", a.budget},     {"tune_budget", a.tune_budget},
          {"seed", a.seed},         {"selection", a.selection},
          {"strategy", a.strategy}, {"proposer", a.proposer},
          {"sizes", a.sizes},       {"seconds", a.seconds},
          {"no_rules", a.no_rules}, {"rules_dir", a.rules_dir},
          {"device", a.device}};
}

void ApplySettings(const nlohmann::json& s, OptimizeArgs& a) {
  a.budget = s.value("budget", a.budget);
  a.tune_budget = s.value("tune_budget", a.tune_budget);
  a.seed = s.value("seed", a.seed);
  a.selection = s.value("selection", a.selection);
  a.strategy = s.value("strategy", a.strategy);
  a.proposer = s.value("proposer", a.proposer);
  a.sizes = s.value("sizes", a.sizes);
  a.seconds = s.value("seconds", a.seconds);
  a.no_rules = s.value("no_rules", a.no_rules);
  a.rules_dir = s.value("rules_dir", a.rules_dir);
  if (a.device.empty()) a.device = s.value("device", a.device);
}

struct FinalCheck {
  const Elite* elite;
  std::vector<Evaluation> runs;
  std::vector<double> speedups;  // of the ok runs
  bool verified = false;         // every run ok
  double median = 0;
};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string KernelName(const Kernel& k) {
  return fs::path(k.path).filename().string();
}

}  // namespace

int RunOptimize(OptimizeArgs a, const std::string& self) {
  if (a.proposer != "builtin")
    throw InputError("--proposer", 0, a.proposer,
                     "only the built-in proposer exists so far (llm and command are planned)");
  std::unique_ptr<Store> store = OpenStore(a.store);
  bool resuming = a.resume_flag || !a.resume.empty();
  if (!a.resume.empty()) a.run = a.resume;
  if (resuming && a.run.empty())
    throw InputError("--resume", 0, "RUN", "name the run to resume (--resume RUN or --run RUN)");
  std::optional<RunInfo> existing = a.run.empty() ? std::nullopt : store->FindRun(a.run);
  if (resuming && !existing)
    throw InputError(a.store, 0, "run " + a.run, "no such run to resume in this store");
  if (!resuming && existing)
    throw InputError(
        a.store, 0, "run " + a.run,
        "exists already; continue it with --resume " + a.run + " or pick another --run");
  if (existing) {
    ApplySettings(existing->settings, a);  // a resumed run goes on with its own settings
    if (a.task.empty()) a.task = existing->task;
  }
  if (a.task.empty()) throw InputError("optimize", 0, "TASK", "give the task to optimise");
  std::optional<Selection> selection = SelectionByName(a.selection);
  if (!selection) {
    std::string names;
    for (const auto& n : SelectionNames()) names += " " + n;
    throw InputError("--selection", 0, a.selection, "unknown selection (known:" + names + ")");
  }
  if (a.compile_ahead != "auto" && a.compile_ahead != "on" && a.compile_ahead != "off")
    throw InputError("--compile-ahead", 0, a.compile_ahead, "expected auto, on or off");
  if (!a.strategy.empty() && !MakeStrategy(a.strategy))
    throw InputError("--strategy", 0, a.strategy, "unknown strategy");

  Task task = FindTask(a.task);
  const ExecutorOptions o = Aimed(a.executor, self, task.dir, a.device, a.sizes);
  Supervisor supervisor(o);
  const nlohmann::json& info = supervisor.executor_info();
  DeviceContext device = MakeDeviceContext(info, task, a.sizes);
  std::string device_name = info.value("device", "");
  if (a.run.empty()) a.run = DefaultRunName(task.name);
  RunInfo run = store->OpenRun({a.run, task.name, device_name, SettingsJson(a), ""});

  SearchSettings s;
  s.run = run.name;
  s.device = device_name;
  s.eval_settings = {{"sizes", a.sizes}, {"seeds", o.seeds}};
  s.budget = a.budget;
  s.seconds = a.seconds;
  s.tune_budget = a.tune_budget;
  s.seed = a.seed;
  s.selection = *selection;
  s.strategy = a.strategy;
  s.device_env = device.env;
  s.rule_context = device.context;
  if (!a.no_rules) s.rules = LoadRules(a.rules_dir.empty() ? DefaultRulesDir() : a.rules_dir);

  fmt::print(stderr,
             "{} run {} of {} on {}: budget {} evaluations ({} per proposal), seed {}, "
             "store {}\n",
             existing ? "resuming" : "starting", run.name, task.name, device_name, a.budget,
             a.tune_budget, a.seed, a.store);
  if (!existing)
    fmt::print(stderr, "(if it is interrupted: kfoundry optimize --store {} --resume {})\n",
               a.store, run.name);
  // Compiling ahead in a second executor pays on a GPU; on a CPU device the compiler would
  // compete with the kernels being timed.
  bool ahead =
      a.compile_ahead == "on" || (a.compile_ahead == "auto" && info.value("class", "") == "gpu");
  std::unique_ptr<CompileAhead> compile_ahead;
  if (ahead) {
    ExecutorOptions ao = o;
    ao.baseline_ms = info.value("baseline_ms", 0.0);
    compile_ahead = std::make_unique<CompileAhead>(ao);
  }
  const DescriptorSpace descriptors = DescriptorSpace::Load(DefaultDescriptorFile());
  BuiltinProposer proposer(descriptors);
  SupervisorJudge judge(supervisor, compile_ahead.get());
  ProgressLine line(10);
  SearchResult result = RunSearch(task, device.language, proposer, judge, *store, s,
                                  [&](const SearchProgress& p) { line(p); });
  line.Finish();

  // Finish: the top elites re-verified on fresh inputs and re-timed against the baseline.
  std::vector<const Elite*> elites;
  for (const auto& [cell, e] : result.archive.cells()) elites.push_back(&e);
  std::sort(elites.begin(), elites.end(),
            [](const Elite* x, const Elite* y) { return x->speedup > y->speedup; });
  if (static_cast<int>(elites.size()) > a.top) elites.resize(static_cast<size_t>(a.top));
  if (!elites.empty())
    fmt::print(stderr, "re-verifying the top {} on fresh inputs, {} times each\n", elites.size(),
               a.repeats);
  std::vector<FinalCheck> finals;
  for (const Elite* e : elites) {
    FinalCheck f{e, {}, {}, true, 0};
    for (int r = 0; r < a.repeats; ++r) {
      Evaluation ev = supervisor.Evaluate(e->kernel, e->config);
      if (ev.status == Status::kOk && ev.speedup) {
        f.speedups.push_back(*ev.speedup);
      } else {
        f.verified = false;
      }
      f.runs.push_back(std::move(ev));
    }
    f.median = Median(f.speedups);
    finals.push_back(std::move(f));
  }
  const FinalCheck* best = nullptr;
  for (const FinalCheck& f : finals) {
    if (f.verified && (!best || f.median > best->median)) best = &f;
  }
  std::string best_file;
  const Evaluation* best_eval = nullptr;
  if (best) {
    // The run whose speedup is the median stands for the best kernel.
    for (const Evaluation& ev : best->runs) {
      if (!best_eval ||
          std::abs(*ev.speedup - best->median) < std::abs(*best_eval->speedup - best->median))
        best_eval = &ev;
    }
    fs::path dir = fs::path(a.out_dir) / run.name;
    fs::create_directories(dir);
    const Kernel& k = best->elite->kernel;
    best_file = (dir / ("best" + fs::path(k.path).extension().string())).string();
    std::ofstream out(best_file);
    out << fmt::format(
        "// KernelFoundry run {} ({} on {}): {}, configuration {} (the defaults below).\n"
        "// Re-verified {} times: speedup {:.3f}x (median) over the task's baseline.\n",
        run.name, task.name, device_name, best->elite->origin, ConfigToString(best->elite->config),
        a.repeats, best->median);
    out << WithDefaults(k, best->elite->config);
  }

  std::map<std::string, int> verdicts = result.verdicts;
  int cache_hits = 0;  // of the evaluations judged now
  for (const SearchEvaluation& e : result.trace)
    cache_hits += !e.from_store && e.evaluation.compile_cache_hit;
  int evaluations = static_cast<int>(result.trace.size());
  double rate = result.seconds > 0 ? result.judged_now / result.seconds : 0;
  nlohmann::json archive = nlohmann::json::array();
  for (const auto& [cell, e] : result.archive.cells()) {
    archive.push_back({{"cell", cell},
                       {"speedup", e.speedup},
                       {"time_ms", e.time_ms},
                       {"kernel_id", e.kernel_id},
                       {"kernel", KernelName(e.kernel)},
                       {"origin", e.origin},
                       {"config", ConfigToJson(e.config)}});
  }
  nlohmann::json final_json = nlohmann::json::array();
  for (const FinalCheck& f : finals) {
    nlohmann::json runs = nlohmann::json::array();
    for (const Evaluation& ev : f.runs) runs.push_back(ev.speedup ? *ev.speedup : 0.0);
    final_json.push_back({{"kernel", KernelName(f.elite->kernel)},
                          {"kernel_id", f.elite->kernel_id},
                          {"config", ConfigToJson(f.elite->config)},
                          {"verified", f.verified},
                          {"speedups", runs},
                          {"median_speedup", f.median}});
  }
  store->AddEvent(run.name, "finish", {{"final", final_json}, {"best_file", best_file}});
  int cells_total = 1;
  for (const Dimension& d : descriptors.dimensions())
    cells_total *= static_cast<int>(d.levels.size());

  if (a.json) {
    nlohmann::json out;
    out["run"] = run.name;
    out["task"] = task.name;
    out["device"] = device_name;
    out["stop_reason"] = result.stop_reason;
    if (best_eval) {
      out["best"] = EvaluationToJson(*best_eval);
      out["best"]["kernel"] = KernelName(best->elite->kernel);
      out["best"]["kernel_id"] = best->elite->kernel_id;
      out["best"]["origin"] = best->elite->origin;
      out["best"]["kernel_file"] = best_file;
      out["best"]["speedup_median"] = best->median;
      out["best"]["speedup_range"] = {
          *std::min_element(best->speedups.begin(), best->speedups.end()),
          *std::max_element(best->speedups.begin(), best->speedups.end())};
    } else {
      out["best"] = nullptr;
    }
    out["evaluations"] = evaluations;
    nlohmann::json trace = nlohmann::json::array();
    for (const SearchEvaluation& e : result.trace) {
      const Evaluation& ev = e.evaluation;
      trace.push_back({{"kernel_id", e.kernel_id},
                       {"origin", e.origin},
                       {"config", ConfigToJson(e.config)},
                       {"status", StatusName(ev.status)},
                       {"time_ms", ev.time ? nlohmann::json(ev.time->median_ms) : nullptr},
                       {"speedup", ev.speedup ? nlohmann::json(*ev.speedup) : nullptr},
                       {"from_store", e.from_store}});
    }
    out["trace"] = trace;
    out["archive"] = archive;
    out["final"] = final_json;
    out["proposals"] = result.proposals;
    out["totals"] = {{"proposals", result.proposals.size()},
                     {"evaluations", evaluations},
                     {"judged_now", result.judged_now},
                     {"from_store", result.from_store},
                     {"verdicts", verdicts},
                     {"cells_filled", result.archive.cells().size()},
                     {"cells_total", cells_total},
                     {"seconds", result.seconds},
                     {"evaluations_per_second", rate}};
    out["executor"] = supervisor.counters().ToJson();
    out["totals"]["compiled_ahead"] = compile_ahead ? compile_ahead->compiled() : 0;
    out["totals"]["compile_cache_hits"] = cache_hits;
    std::cout << out.dump(2) << "\n";
    return 0;
  }

  fmt::print("run         {} ({} on {}), stopped: {}\n", run.name, task.name, device_name,
             result.stop_reason);
  fmt::print(
      "totals      {} proposals, {} evaluations ({} judged now, {} from the store), "
      "{:.1f} s, {:.2f} evaluations/s\n",
      result.proposals.size(), evaluations, result.judged_now, result.from_store, result.seconds,
      rate);
  fmt::print("compiles    {} of {} judged candidates found compiled in the cache{}\n", cache_hits,
             result.judged_now,
             compile_ahead ? fmt::format(" ({} compiled ahead in a second executor)",
                                         compile_ahead->compiled())
                           : "");
  std::string v;
  for (const auto& [status, n] : verdicts)
    v += fmt::format("{}{} {}", v.empty() ? "" : ", ", status, n);
  fmt::print("verdicts    {}\n", v);
  fmt::print("archive     {} of {} cells filled (cell = [memory, algorithm, coordination]):\n",
             result.archive.cells().size(), cells_total);
  for (const auto& [cell, e] : result.archive.cells()) {
    fmt::print("  [{}, {}, {}]  {:7.2f}x  {:.4f} ms  {} {}\n", cell.size() > 0 ? cell[0] : 0,
               cell.size() > 1 ? cell[1] : 0, cell.size() > 2 ? cell[2] : 0, e.speedup, e.time_ms,
               KernelName(e.kernel), ConfigToString(e.config));
  }
  fmt::print(
      "final       the top {} re-verified on fresh inputs and re-timed against the baseline "
      "({} times each):\n",
      finals.size(), a.repeats);
  for (const FinalCheck& f : finals) {
    std::string speedups;
    for (double x : f.speedups) speedups += fmt::format("{}{:.2f}", speedups.empty() ? "" : " ", x);
    fmt::print("  {} {}: {}, speedups {}\n", KernelName(f.elite->kernel),
               ConfigToString(f.elite->config), f.verified ? "verified" : "NOT verified",
               speedups.empty() ? "-" : speedups);
  }
  if (!best_eval) {
    fmt::print("best        none: no candidate passed re-verification\n");
    return 0;
  }
  fmt::print("best        {} {} ({})\n", KernelName(best->elite->kernel),
             ConfigToString(best->elite->config), best->elite->origin);
  fmt::print("speedup     {:.3f}x median over the baseline (range {:.3f}–{:.3f}, same process)\n",
             best->median, *std::min_element(best->speedups.begin(), best->speedups.end()),
             *std::max_element(best->speedups.begin(), best->speedups.end()));
  if (best_eval->time)
    fmt::print("time        {:.4f} ms median at sizes '{}' (baseline {:.4f} ms)\n",
               best_eval->time->median_ms, best_eval->bench_sizes,
               best_eval->baseline_time ? best_eval->baseline_time->median_ms : 0.0);
  if (best_eval->bandwidth_gbs) {
    fmt::print("bandwidth   {:.1f} GB/s", *best_eval->bandwidth_gbs);
    if (best_eval->roofline_fraction)
      fmt::print(" = {:.1f}% of the measured copy bandwidth", 100 * *best_eval->roofline_fraction);
    fmt::print("\n");
  }
  fmt::print("kernel      {}\n", best_file);
  fmt::print("check it    kfoundry eval {} {}{}\n", task.name, best_file,
             a.device.empty() ? "" : " --device " + a.device);
  return 0;
}

}  // namespace kf
