#include "cli/optimize_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "backend/registry.hpp"
#include "cli/device_context.hpp"
#include "cli/eval_command.hpp"
#include "cli/llm_setup.hpp"
#include "core/codec.hpp"
#include "core/input_error.hpp"
#include "core/task_library.hpp"
#include "host/judge.hpp"
#include "propose/make_proposer.hpp"
#include "report/text_heatmap.hpp"
#include "search/classifier.hpp"
#include "search/reverify.hpp"
#include "search/run_summary.hpp"
#include "search/search_loop.hpp"
#include "store/store.hpp"
#include "tune/strategy.hpp"

namespace kf {

namespace {

namespace fs = std::filesystem;

// A rewritten line on a terminal; a plain line every 10 evaluations otherwise. Bad replies and
// proposals given up are said on their own lines.
class ProgressLine : public SearchCallback {
 public:
  explicit ProgressLine(int every) : tty_(isatty(2)), every_(every) {}
  void OnProgress(const SearchProgress& p) override {
    if (p.evaluations == last_) return;
    bool crossed = last_ < 0 || p.evaluations / every_ != last_ / every_;
    last_ = p.evaluations;
    if (!tty_ && !crossed && p.evaluations != p.budget) return;
    double rate = p.seconds > 0 ? p.judged_now / p.seconds : 0;
    std::string eta = rate > 0 ? fmt::format("{:.0f} s", (p.budget - p.evaluations) / rate) : "-";
    fmt::print(stderr,
               "{}optimize: {}/{} evaluations, {} proposals ({} out), best {:.2f}x, {} cells, "
               "{:.2f} eval/s, ETA {}{}",
               tty_ ? "\r" : "", p.evaluations, p.budget, p.proposals, p.proposals_out,
               p.best_speedup, p.cells, rate, eta, tty_ ? "   " : "\n");
    std::fflush(stderr);
  }
  void OnProposal(const ProposalRecord& r) override {
    if (r.state != ProposalState::kBadReply) return;
    fmt::print(stderr, "{}proposal p{}: bad reply: {}\n", tty_ ? "\r" : "", r.index,
               r.outcome.value("reason", ""));
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

// A resumed run goes on with its stored settings; what says where things are on this host, given
// now, wins: the output folder, the devices, the model's server, its models file and prompts.
RunSettings Resumed(const RunSettings& stored, const RunSettings& given) {
  RunSettings s = stored;
  auto prefer = [](std::string& kept, const std::string& now) {
    if (!now.empty()) kept = now;
  };
  prefer(s.out_dir, given.out_dir);
  prefer(s.device, given.device);
  prefer(s.proposer.llm.base_url, given.proposer.llm.base_url);
  prefer(s.proposer.llm.model, given.proposer.llm.model);
  prefer(s.proposer.llm.models_file, given.proposer.llm.models_file);
  prefer(s.proposer.llm.prompts_dir, given.proposer.llm.prompts_dir);
  return s;
}

// TASK as a command the tool prints must name it: the bundled name where that finds this task,
// else its folder (with the variant's name after a '.').
std::string TaskArgument(const std::string& name, const std::string& dir,
                         const std::string& variant) {
  try {
    if (fs::equivalent(FindTask(name).dir, dir)) return name;
  } catch (const std::exception&) {
    // not a bundled task: its folder below
  }
  return JoinTaskVariant(dir, variant);
}

std::string KernelName(const Kernel& k) {
  return fs::path(k.path).filename().string();
}

void Validate(const OptimizeArgs& a) {
  CheckProposerSettings(a.settings.proposer);
  const SearchPolicy& p = a.settings.search;
  if (!SelectionByName(p.selection)) {
    std::string names;
    for (const auto& n : SelectionNames()) names += " " + n;
    throw InputError("--selection", 0, p.selection, "unknown selection (known:" + names + ")");
  }
  if (!p.strategy.empty() && !MakeStrategy(p.strategy))
    throw InputError("--strategy", 0, p.strategy, "unknown strategy");
  if (a.task.empty()) throw InputError("optimize", 0, "TASK", "give the task to optimise");
}

// The best kernel with its configuration as its defaults: a file `kfoundry eval` judges alone.
std::string BestPath(const RunSummary& s, const std::string& out_dir) {
  const Kernel& k = s.Best()->elite.kernel;
  return (fs::path(out_dir) / s.run.name / ("best" + fs::path(k.path).extension().string()))
      .string();
}

std::string WriteBest(const RunSummary& s, const std::string& out_dir, const std::string& task,
                      int repeats) {
  const FinalCheck& best = *s.Best();
  const Kernel& k = best.elite.kernel;
  std::string file = BestPath(s, out_dir);
  fs::create_directories(fs::path(file).parent_path());
  std::ofstream out(file);
  out << fmt::format(
      "// KernelFoundry run {} ({} on {}): {}, configuration {} (the defaults below).\n"
      "// Re-verified {} times on {}: speedup {:.3f}x (median) over the task's baseline.\n",
      s.run.name, task, s.run.device, best.elite.origin, ConfigToString(best.elite.config), repeats,
      best.device, best.median);
  out << WithDefaults(k, best.elite.config);
  return file;
}

// The baseline's median time over the run's search evaluations (each timed its baseline, or
// reused a recent timing): one figure to put every elite's time against.
nlohmann::json ArchiveJson(const Archive& archive) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [cell, e] : archive.cells()) {
    out.push_back({{"cell", cell},
                   {"speedup", e.speedup},
                   {"time_ms", e.time_ms},
                   {"kernel_id", e.kernel_id},
                   {"kernel", KernelName(e.kernel)},
                   {"origin", e.origin},
                   {"config", ConfigToJson(e.config)},
                   {"device", e.device}});
  }
  return out;
}

nlohmann::json FinalJson(const RunSummary& s) {
  nlohmann::json out = nlohmann::json::array();
  for (const FinalCheck& f : s.finals) {
    nlohmann::json runs = nlohmann::json::array();
    for (const Evaluation& ev : f.runs) runs.push_back(ev.speedup ? *ev.speedup : 0.0);
    out.push_back({{"kernel", KernelName(f.elite.kernel)},
                   {"kernel_id", f.elite.kernel_id},
                   {"config", ConfigToJson(f.elite.config)},
                   {"device", f.device},
                   {"verified", f.verified},
                   {"speedups", runs},
                   {"median_speedup", f.median}});
  }
  return out;
}

nlohmann::json DevicesJson(const SearchTotals& t) {
  nlohmann::json out = nlohmann::json::array();
  for (const RunnerStats& r : t.runners) {
    out.push_back({{"device", r.device},
                   {"evaluations", r.jobs},
                   {"busy_seconds", r.busy_seconds},
                   {"busy_fraction",
                    t.search.seconds > 0 ? std::min(1.0, r.busy_seconds / t.search.seconds) : 0}});
  }
  return out;
}

int PrintJson(const RunSummary& s, const SearchTotals& t, const std::string& task,
              const std::string& best_file, int cells_total) {
  nlohmann::json out;
  out["run"] = s.run.name;
  out["task"] = task;
  out["device"] = s.run.device;
  out["stop_reason"] = t.search.stop_reason;
  if (!t.llm.is_null()) out["llm"] = t.llm;
  const FinalCheck* best = s.Best();
  if (best) {
    out["best"] = EvaluationToJson(*s.BestRun());
    out["best"]["kernel"] = KernelName(best->elite.kernel);
    out["best"]["kernel_id"] = best->elite.kernel_id;
    out["best"]["origin"] = best->elite.origin;
    out["best"]["kernel_file"] = best_file;
    out["best"]["speedup_median"] = best->median;
    out["best"]["speedup_range"] = {
        *std::min_element(best->speedups.begin(), best->speedups.end()),
        *std::max_element(best->speedups.begin(), best->speedups.end())};
    out["best"]["verified_on"] = best->device;
  } else {
    out["best"] = nullptr;
  }
  std::map<int, std::string> origins;
  for (const ProposalRecord& r : s.proposals)
    if (r.proposal) origins[r.index] = r.proposal->origin;
  nlohmann::json trace = nlohmann::json::array();
  for (const StoredEvaluation& e : s.evaluations) {
    const Evaluation& ev = e.evaluation;
    trace.push_back({{"kernel_id", e.kernel_id},
                     {"proposal", e.proposal},
                     {"origin", origins[e.proposal]},
                     {"config", ConfigToJson(e.config)},
                     {"status", StatusName(ev.status)},
                     {"device", ev.device},
                     {"time_ms", ev.time ? nlohmann::json(ev.time->median_ms) : nullptr},
                     {"speedup", ev.speedup ? nlohmann::json(*ev.speedup) : nullptr}});
  }
  nlohmann::json proposals = nlohmann::json::array();
  for (const ProposalRecord& r : s.proposals) proposals.push_back(ProposalLine(r));
  out["evaluations"] = s.evaluations.size();
  out["trace"] = trace;
  out["archive"] = ArchiveJson(s.archive);
  out["run_baseline_ms"] = RunBaselineMs(s);
  out["final"] = FinalJson(s);
  out["proposals"] = proposals;
  double rate = t.search.seconds > 0 ? t.search.judged_now / t.search.seconds : 0;
  out["totals"] = {{"proposals", s.proposals.size()},
                   {"proposal_states", s.proposal_states},
                   {"proposal_verdicts", t.search.proposal_verdicts},
                   {"evaluations", s.evaluations.size()},
                   {"judged_now", t.search.judged_now},
                   {"from_store", t.search.from_store},
                   {"verdicts", s.verdicts},
                   {"evaluations_by_device", s.evaluations_by_device},
                   {"cells_filled", s.archive.cells().size()},
                   {"cells_total", cells_total},
                   {"seconds", t.search.seconds},
                   {"evaluations_per_second", rate},
                   {"reverified_now", t.reverified_now},
                   {"budget", s.budget},
                   {"build_jobs", t.build_jobs}};
  // Where an evaluation's time goes, on average over this run's evaluations that reached a phase.
  std::map<std::string, std::pair<double, int>> phases;
  for (const StoredEvaluation& e : s.evaluations) {
    for (const auto& [phase, ms] : e.evaluation.phase_ms) {
      phases[phase].first += ms;
      ++phases[phase].second;
    }
  }
  nlohmann::json mean_phases = nlohmann::json::object();
  for (const auto& [phase, sum] : phases) mean_phases[phase] = sum.first / sum.second;
  out["totals"]["mean_phase_ms"] = mean_phases;
  out["devices"] = DevicesJson(t);
  if (t.executors) out["executor"] = t.executors->ToJson();
  std::cout << out.dump(2) << "\n";
  return 0;
}

int PrintText(const RunSummary& s, const SearchTotals& t, const OptimizeArgs& a,
              const std::string& best_file, const DescriptorSpace& descriptors) {
  const int cells_total = descriptors.CellCount();
  fmt::print("run         {} ({} on {}), stopped: {}\n", s.run.name, s.run.task, s.run.device,
             t.search.stop_reason);
  double rate = t.search.seconds > 0 ? t.search.judged_now / t.search.seconds : 0;
  fmt::print(
      "totals      {} proposals, {} evaluations ({} judged now, {} from the store), "
      "{:.1f} s, {:.2f} evaluations/s\n",
      s.proposals.size(), s.evaluations.size(), t.search.judged_now, t.search.from_store,
      t.search.seconds, rate);
  fmt::print("budget      {} new kernels, {} tuning their proposals, {} deeper tuning of elites\n",
             s.budget.at("new_kernels"), s.budget.at("tuning"), s.budget.at("deeper_tuning"));
  std::string states;
  for (const auto& [state, n] : s.proposal_states)
    states += fmt::format("{}{} {}", states.empty() ? "" : ", ", state, n);
  const ProposerSettings& proposer = a.settings.proposer;
  fmt::print("proposals   {} ({} proposer{})\n", states, proposer.kind,
             proposer.kind == "command" ? ": " + proposer.command : "");
  if (!t.llm.is_null()) {
    fmt::print(
        "llm         {} requests ({} failed), {} prompt + {} reply tokens, ${:.4f}, {} "
        "replies repaired, {} component versions by the meta step\n",
        t.llm["requests"].get<int>(), t.llm["failed_requests"].get<int>(),
        t.llm["prompt_tokens"].get<int>(), t.llm["completion_tokens"].get<int>(),
        t.llm["cost_usd"].get<double>(), t.llm["repaired_replies"].get<int>(),
        t.llm["meta_versions"].get<int>());
  }
  for (const RunnerStats& r : t.runners) {
    fmt::print("device      {}: {} evaluations, busy {:.0f}% of the search\n", r.device, r.jobs,
               t.search.seconds > 0 ? 100 * std::min(1.0, r.busy_seconds / t.search.seconds) : 0);
  }
  std::string v;
  for (const auto& [status, n] : s.verdicts)
    v += fmt::format("{}{} {}", v.empty() ? "" : ", ", status, n);
  fmt::print("verdicts    {}\n", v);
  // Each elite's own speedup is against the baseline timed beside it; one figure for all makes
  // the column comparable.
  double baseline_ms = RunBaselineMs(s);
  fmt::print(
      "archive     {} of {} cells filled (cell = [memory, algorithm, coordination]; speedup = "
      "{:.4f} ms, the baseline's median time over the run, / the cell's time):\n",
      s.archive.cells().size(), cells_total, baseline_ms);
  for (const auto& [cell, e] : s.archive.cells()) {
    fmt::print("  [{}, {}, {}]  {:7.2f}x  {:.4f} ms  {} {}  ({})\n", cell.size() > 0 ? cell[0] : 0,
               cell.size() > 1 ? cell[1] : 0, cell.size() > 2 ? cell[2] : 0,
               e.time_ms > 0 ? baseline_ms / e.time_ms : 0.0, e.time_ms, KernelName(e.kernel),
               ConfigToString(e.config), e.device);
  }
  std::map<std::vector<int>, double> speedups;
  for (const auto& [cell, e] : s.archive.cells())
    if (e.time_ms > 0) speedups[cell] = baseline_ms / e.time_ms;
  if (!speedups.empty())
    fmt::print("heat map    {}", TextHeatMap(descriptors.dimensions(), speedups, isatty(1) != 0));
  fmt::print(
      "final       the top {} re-verified on fresh inputs and re-timed against the baseline "
      "({} times each):\n",
      s.finals.size(), a.settings.final.repeats);
  for (const FinalCheck& f : s.finals) {
    std::string speedups;
    for (double x : f.speedups) speedups += fmt::format("{}{:.2f}", speedups.empty() ? "" : " ", x);
    fmt::print("  {} {}: {} on {}, speedups {}\n", KernelName(f.elite.kernel),
               ConfigToString(f.elite.config), f.verified ? "verified" : "NOT verified", f.device,
               speedups.empty() ? "-" : speedups);
  }
  const FinalCheck* best = s.Best();
  auto print_report = [&] {
    fmt::print("report      kfoundry report {} --store {}\n", s.run.name, AbsoluteStore(a.store));
  };
  if (!best) {
    fmt::print("best        none: no candidate passed re-verification\n");
    print_report();
    return 0;
  }
  const Evaluation& run = *s.BestRun();
  fmt::print("best        {} {} ({})\n", KernelName(best->elite.kernel),
             ConfigToString(best->elite.config), best->elite.origin);
  fmt::print(
      "speedup     {:.3f}x median over the baseline (range {:.3f}–{:.3f}, same process, {})\n",
      best->median, *std::min_element(best->speedups.begin(), best->speedups.end()),
      *std::max_element(best->speedups.begin(), best->speedups.end()), best->device);
  if (run.time)
    fmt::print("time        {:.4f} ms median at sizes '{}' (baseline {:.4f} ms)\n",
               run.time->median_ms, run.bench_sizes,
               run.baseline_time ? run.baseline_time->median_ms : 0.0);
  PrintExternalBaselines(run);
  if (run.bandwidth_gbs) {
    fmt::print("bandwidth   {:.1f} GB/s", *run.bandwidth_gbs);
    if (run.roofline_fraction)
      fmt::print(" = {:.1f}% of the measured copy bandwidth", 100 * *run.roofline_fraction);
    fmt::print("\n");
    WarnIfOverPeak(run);
  }
  fmt::print("kernel      {}\n", best_file);
  const std::string& device = a.settings.device;
  fmt::print("check it    kfoundry eval {} {}{}\n",
             TaskArgument(s.run.task, a.settings.task_dir, a.settings.task_variant), best_file,
             device.empty() ? "" : " --device " + device.substr(0, device.find(',')));
  print_report();
  return 0;
}

}  // namespace

void CheckRunName(const std::string& name) {
  bool ok = name.size() <= 100 && name.front() != '.' && name.front() != '-';
  for (char c : name)
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-');
  if (!ok)
    throw InputError("--run", 0, name,
                     "a run's name is at most 100 letters, digits, '.', '_' and '-', not "
                     "starting with '.' or '-' (it names the report's file and the dashboard's "
                     "URL)");
}

std::string AbsoluteStore(const std::string& url) {
  std::string path = url.rfind("sqlite:", 0) == 0 ? url.substr(7) : url;
  if (path.find("://") != std::string::npos || path.empty()) return RedactStoreUrl(url);
  return "sqlite:" + fs::absolute(path).lexically_normal().string();
}

PreparedRun PrepareRun(OptimizeArgs a) {
  PreparedRun p;
  bool resuming = a.resume_flag || !a.resume.empty();
  if (!resuming && !a.run.empty()) CheckRunName(a.run);  // before a store file is made for it
  p.store = OpenStore(a.store);
  if (!a.resume.empty()) a.run = a.resume;
  if (resuming && a.run.empty())
    throw InputError("--resume", 0, "RUN", "name the run to resume (--resume RUN or --run RUN)");
  p.existing = a.run.empty() ? std::nullopt : p.store->FindRun(a.run);
  if (resuming && !p.existing)
    throw InputError(RedactStoreUrl(a.store), 0, "run " + a.run,
                     "no such run to resume in this store");
  if (!resuming && p.existing)
    throw InputError(
        RedactStoreUrl(a.store), 0, "run " + a.run,
        "exists already; continue it with --resume " + a.run + " or pick another --run");
  if (p.existing) {
    try {  // a resumed run goes on with its own settings
      a.settings = Resumed(RunSettingsFromJson(p.existing->settings), a.settings);
    } catch (const nlohmann::json::exception& e) {
      throw InputError(RedactStoreUrl(a.store), 0, "run " + a.run,
                       std::string("its stored settings cannot be read: ") + e.what());
    }
    // The folder it ran from (a task of the user's own is no bundled name), else its name.
    const std::string& dir = a.settings.task_dir;
    const std::string& variant = a.settings.task_variant;
    if (a.task.empty())
      a.task =
          !dir.empty() && fs::is_directory(dir) ? JoinTaskVariant(dir, variant) : p.existing->task;
  }
  Validate(a);
  RunSettings& rs = a.settings;
  p.task = FindTask(a.task);
  rs.task_dir = fs::absolute(p.task.dir).lexically_normal().string();
  rs.task_variant = p.task.variant;
  if (rs.out_dir.empty()) rs.out_dir = "kfoundry-out";
  rs.out_dir = fs::absolute(rs.out_dir).lexically_normal().string();
  if (a.run.empty()) a.run = DefaultRunName(p.task.name);
  p.args = std::move(a);
  return p;
}

SearchOutcome SearchRun(PreparedRun& p, const JudgeSide& side) {
  OptimizeArgs& a = p.args;
  RunSettings& rs = a.settings;
  const Task& task = p.task;
  Store& store = *p.store;
  Judge& judge = side.judge;
  DeviceContext device = MakeDeviceContext(side.device, task, rs.sizes);
  const std::string& devices = side.devices;
  RunInfo run = store.OpenRun({a.run, task.name, devices, RunSettingsToJson(rs), ""});

  SearchSettings s;
  s.run = run.name;
  s.devices = devices;
  s.eval_settings = {{"sizes", rs.sizes}, {"seeds", rs.judging.check_seeds}};
  if (rs.judging.check_on != "device") s.eval_settings["check_on"] = rs.judging.check_on;
  s.judging = rs.judging;
  s.policy = rs.search;
  s.device_env = device.env;
  s.rule_context = device.context;
  if (rs.search.use_rules)
    s.rules = LoadRules(rs.search.rules_dir.empty() ? DefaultRulesDir() : rs.search.rules_dir);
  s.device = side.device;
  s.peak_gbs = side.peak_gbs;

  const std::optional<RunInfo>& existing = p.existing;
  fmt::print(stderr,
             "{} run {} of {} on {}: budget {} evaluations ({} per proposal), {} proposer, {} in "
             "flight, seed {}, store {}\n",
             existing ? "resuming" : "starting", run.name, task.name, devices, rs.search.budget,
             rs.search.tune_budget, rs.proposer.kind, rs.search.in_flight, rs.search.seed,
             RedactStoreUrl(a.store));
  if (!existing)
    fmt::print(stderr, "(if it is interrupted: {} --store {} --resume {})\n", side.resume_command,
               AbsoluteStore(a.store), run.name);
  const DescriptorSpace descriptors = DescriptorSpace::Load(DefaultDescriptorFile());
  std::unique_ptr<PromptJournal> journal;
  if (rs.proposer.kind == "llm") journal = MakeStorePromptJournal(store, run.name);
  ProposerContext context;
  context.language = device.language;
  context.predict = [&](const Kernel& k) { return descriptors.Classify(k.language, k.source, ""); };
  context.journal = journal.get();
  context.api_key = a.llm_api_key;
  context.in_flight = rs.search.in_flight;
  context.chat = side.chat;
  context.commands = side.commands;
  MadeProposer made = MakeProposer(rs.proposer, task, context);
  if (rs.proposer.kind == "llm") fmt::print(stderr, "llm proposer: {}\n", made.description);
  Proposer& proposer = *made.proposer;
  ProgressLine line(10);
  SearchTotals totals;
  totals.search = RunSearch(task, proposer, judge, store, descriptors, s, {&line});
  line.Finish();
  totals.runners = side.runner_stats();
  totals.build_jobs = judge.build_jobs();

  // Finish: the top elites re-verified on one device, on fresh inputs, against the baseline.
  if (!totals.search.archive.empty())
    fmt::print(
        stderr, "re-verifying the top {} on fresh inputs on {}, {} times each\n",
        std::min<size_t>(static_cast<size_t>(rs.final.top), totals.search.archive.cells().size()),
        side.reverified_on, rs.final.repeats);
  totals.reverified_now =
      Reverify(totals.search.archive, judge, store,
               {run.name, devices, s.eval_settings, rs.final.top, rs.final.repeats, 0});
  totals.runners = side.runner_stats();
  if (side.counters) totals.executors = side.counters();

  RunSummary summary = ReadRunSummary(store, run.name);
  if (rs.proposer.kind == "llm")
    totals.llm = LlmTotals(summary.proposals, store.RunPromptVersions(run.name));
  std::string best_file;
  if (summary.Best()) {
    // A resumed run that judged nothing leaves the file it wrote (and any edit since) alone.
    best_file = BestPath(summary, rs.out_dir);
    bool unchanged = totals.search.judged_now == 0 && totals.reverified_now == 0;
    if (!unchanged || !fs::exists(best_file))
      best_file = WriteBest(summary, rs.out_dir, task.name, rs.final.repeats);
  }
  store.AddEvent(run.name, "finish",
                 {{"final", FinalJson(summary)},
                  {"best_file", best_file},
                  {"stop_reason", totals.search.stop_reason},
                  {"devices", DevicesJson(totals)}});
  return {std::move(summary), std::move(totals), best_file};
}

int PrintOutcome(const PreparedRun& p, const SearchOutcome& o) {
  const DescriptorSpace descriptors = DescriptorSpace::Load(DefaultDescriptorFile());
  if (p.args.json)
    return PrintJson(o.summary, o.totals, p.task.name, o.best_file, descriptors.CellCount());
  return PrintText(o.summary, o.totals, p.args, o.best_file, descriptors);
}

int SearchAndReport(PreparedRun& p, const JudgeSide& side) {
  SearchOutcome outcome = SearchRun(p, side);
  return PrintOutcome(p, outcome);
}

SearchOutcome SearchOnThisHost(PreparedRun& p, const std::string& self) {
  const RunSettings& rs = p.args.settings;
  JudgeOptions options;
  options.executor = Aimed(p.args.executor, self, p.task.dir, "", rs.sizes);
  options.executor.settings = rs.judging;
  options.build_jobs = p.args.build_jobs;
  auto backends = MakeBackends();
  std::string error;
  options.devices = ExpandDeviceSelectors(backends, rs.device, &error);
  if (options.devices.empty()) throw InputError("--device", 0, rs.device, error);
  DeviceJudge judge(p.task, options);
  std::string devices;
  for (int i = 0; i < judge.runner_count(); ++i)
    devices += (i ? ", " : "") + judge.info(i).device.Label();
  JudgeSide side{judge,
                 judge.info().device,
                 judge.info().peak_gbs,
                 devices,
                 judge.info(0).device.Label(),
                 "kfoundry optimize",
                 [&judge] { return judge.runner_stats(); },
                 [&judge] { return judge.counters(); }};
  return SearchRun(p, side);
}

int RunOptimize(OptimizeArgs a, const std::string& self) {
  PreparedRun p = PrepareRun(std::move(a));
  SearchOutcome outcome = SearchOnThisHost(p, self);
  return PrintOutcome(p, outcome);
}

}  // namespace kf
