#include "cli/tune_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "backend/registry.hpp"
#include "cli/device_context.hpp"
#include "core/codec.hpp"
#include "core/input_error.hpp"
#include "core/task_library.hpp"
#include "host/judge.hpp"
#include "tune/rules.hpp"
#include "tune/strategy.hpp"
#include "tune/tune_template.hpp"
#include "tune/tuning_feed.hpp"

namespace kf {

namespace {

// Progress on stderr: a rewritten line on a terminal, a line every 10 evaluations otherwise.
class ProgressLine {
 public:
  ProgressLine(int total, bool quiet) : total_(total), quiet_(quiet), tty_(isatty(2)) {}
  void Add(const Measurement& m) {
    ++done_;
    if (m.ok && (best_ < 0 || m.time_ms < best_)) best_ = m.time_ms;
    if (!quiet_ && (tty_ || done_ % 10 == 0 || done_ == total_)) {
      fmt::print(stderr, "{}tune: {}/{} evaluated, best {} {}", tty_ ? "\r" : "", done_, total_,
                 best_ < 0 ? std::string("none yet") : fmt::format("{:.4f} ms", best_),
                 tty_ ? "   " : "\n");
    }
  }
  void Finish() const {
    if (!quiet_ && tty_ && done_ > 0) fmt::print(stderr, "\n");
  }

 private:
  int total_, done_ = 0;
  double best_ = -1;
  bool quiet_, tty_;
};

// The replay objective seen through the progress line.
class Reporting : public Objective {
 public:
  Reporting(Objective& inner, ProgressLine& line) : inner_(inner), line_(line) {}
  Measurement Measure(const Point& p) override {
    Measurement m = inner_.Measure(p);
    line_.Add(m);
    return m;
  }

 private:
  Objective& inner_;
  ProgressLine& line_;
};

nlohmann::json TraceJson(const SearchSpace& space, const std::vector<TraceEntry>& trace) {
  nlohmann::json out = nlohmann::json::array();
  for (const TraceEntry& e : trace) {
    out.push_back(
        {{"config", ConfigToJson(space.ToConfig(e.point))},
         {"status", e.result.ok ? "ok" : e.result.failure},
         {"time_ms", e.result.ok ? nlohmann::json(e.result.time_ms) : nlohmann::json(nullptr)}});
  }
  return out;
}

std::vector<const TraceEntry*> Ranked(const std::vector<TraceEntry>& trace) {
  std::vector<const TraceEntry*> ok;
  for (const TraceEntry& e : trace) {
    if (e.result.ok) ok.push_back(&e);
  }
  std::sort(ok.begin(), ok.end(),
            [](auto* a, auto* b) { return a->result.time_ms < b->result.time_ms; });
  return ok;
}

// What both paths report: the space, the session's trace, and (live) the verdicts by config.
struct TuneOutcome {
  std::string name;
  const SearchSpace* space = nullptr;
  const TuningSession* session = nullptr;
  std::vector<std::string> applied, hints;
  std::map<Config, Evaluation> verdicts;  // live only
  nlohmann::json executor;                // live only
};

int Report(const TuneArgs& a, const TuneOutcome& o) {
  const TraceEntry* best = o.session->best();
  std::vector<const TraceEntry*> ranked = Ranked(o.session->trace());
  const SearchSpace& space = *o.space;
  if (a.json) {
    nlohmann::json out;
    out["run"] = o.name;
    out["strategy"] = a.strategy;
    out["seed"] = a.seed;
    out["space_size"] = space.size();
    out["rules"] = o.applied;
    out["hints"] = o.hints;
    out["evaluations"] = o.session->evaluations();
    out["trace"] = TraceJson(space, o.session->trace());
    out["archive"] = nlohmann::json::array();
    if (!best) {
      out["best"] = nullptr;
    } else if (!o.verdicts.empty()) {
      out["best"] = EvaluationToJson(o.verdicts.at(space.ToConfig(best->point)));
    } else {
      out["best"] = {{"status", "ok"},
                     {"config", ConfigToJson(space.ToConfig(best->point))},
                     {"time_ms", {{"median", best->result.time_ms}}}};
    }
    if (!o.executor.is_null()) out["executor"] = o.executor;
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  if (!best) {
    fmt::print("no configuration succeeded in {} evaluations\n", o.session->evaluations());
    return 0;
  }
  fmt::print("best        {}  {:.4f} ms  (after {} evaluations)\n",
             ConfigToString(space.ToConfig(best->point)), best->result.time_ms,
             o.session->evaluations());
  if (!o.verdicts.empty()) {
    const Evaluation& ev = o.verdicts.at(space.ToConfig(best->point));
    if (ev.speedup)
      fmt::print("speedup     {:.3f}x over the baseline (same process, {})\n", *ev.speedup,
                 ev.device);
    if (ev.bandwidth_gbs) fmt::print("bandwidth   {:.1f} GB/s\n", *ev.bandwidth_gbs);
  }
  fmt::print("top:\n");
  for (size_t i = 0; i < std::min<size_t>(5, ranked.size()); ++i) {
    fmt::print("  {:.4f} ms  {}\n", ranked[i]->result.time_ms,
               ConfigToString(space.ToConfig(ranked[i]->point)));
  }
  int failed = 0;
  for (const TraceEntry& e : o.session->trace()) failed += !e.result.ok;
  if (failed) fmt::print("{} of {} configurations failed\n", failed, o.session->evaluations());
  return 0;
}

void Announce(const TuneArgs& a, const TuneOutcome& o) {
  if (a.json) return;
  fmt::print(stderr, "tuning {}: {} valid configurations, strategy {}, budget {}, seed {}\n",
             o.name, o.space->size(), a.strategy, a.budget, a.seed);
  for (const std::string& r : o.applied) fmt::print(stderr, "rule: {}\n", r);
  for (const std::string& h : o.hints) fmt::print(stderr, "hint: {}\n", h);
}

int RunReplay(const TuneArgs& a) {
  std::unique_ptr<ReplayObjective> replay = ReplayObjective::Load(a.replay);
  TuneOutcome o;
  o.name =
      fmt::format("replay {} ({} on {})", a.replay, replay->kernel_name(), replay->device_name());
  RuleContext context = RecordedSpaceContext(*replay, a.replay);
  std::unique_ptr<RuledSpace> ruled;
  const SearchSpace* space = &replay->space();
  std::vector<Point> try_first;
  if (!a.no_rules) {
    ruled = std::make_unique<RuledSpace>(ApplyRules(
        LoadRules(a.rules_dir.empty() ? DefaultRulesDir() : a.rules_dir), context, *space));
    space = &ruled->space;
    o.applied = ruled->applied;
    o.hints = ruled->hints;
    try_first = ruled->try_first;
  }
  o.space = space;
  Announce(a, o);
  TuningSession session(*space, {a.budget, a.seconds}, MakeStrategy(a.strategy), a.seed);
  session.MeasureFirst(StartingPoints(*space, context.defaults, try_first, a.budget));
  ProgressLine line(std::min<int>(a.budget, static_cast<int>(space->size())), a.json);
  Reporting reporting(*replay, line);
  RunSession(session, reporting);
  line.Finish();
  o.session = &session;
  if (!a.record.empty()) {
    std::map<Point, Measurement> records;
    for (const TraceEntry& e : session.trace()) records[e.point] = e.result;
    WriteKernelTunerCache(a.record, *space, records, replay->kernel_name(), replay->device_name(),
                          RuleContextToJson(context));
  }
  return Report(a, o);
}

int RunLive(const TuneArgs& a, const std::string& self) {
  if (a.task.empty() || a.kernel.empty())
    throw InputError("tune", 0, "TASK KERNEL", "give TASK and KERNEL, or --replay SPACE");
  Task task = FindTask(a.task);
  JudgeOptions options;
  options.executor = Aimed(a.executor, self, task.dir, "", a.sizes);
  options.executor.settings = a.settings;
  auto backends = MakeBackends();
  std::string error;
  options.devices = ExpandDeviceSelectors(backends, a.device, &error);
  if (options.devices.empty()) throw InputError("--device", 0, a.device, error);
  DeviceJudge judge(task, options);
  const DeviceInfo& first = judge.info().device;
  DeviceContext device = MakeDeviceContext(first, task, a.sizes);
  Kernel kernel = LoadKernelFile(ResolveTaskKernel(task, a.kernel, device.language));
  if (kernel.params.empty())
    throw InputError(a.kernel, 0, "@param", "the kernel has no tunable parameters");
  std::vector<Rule> rules;
  if (!a.no_rules) rules = LoadRules(a.rules_dir.empty() ? DefaultRulesDir() : a.rules_dir);
  TuneSettings settings;
  settings.device_env = device.env;  // constraints see the device's properties, as the judge's do
  settings.context = device.context;
  settings.rules = a.no_rules ? nullptr : &rules;
  settings.strategy = a.strategy;
  settings.budget = {a.budget, a.seconds};
  settings.seed = a.seed;
  TuneTemplate tuning(kernel, settings);
  TuneOutcome o;
  std::string devices;
  for (int i = 0; i < judge.runner_count(); ++i)
    devices += (i ? ", " : "") + judge.info(i).device.Label();
  o.name = fmt::format("{} on {}", a.kernel, devices);
  o.space = tuning.space();
  o.applied = tuning.rules_applied();
  o.hints = tuning.hints();
  Announce(a, o);
  ProgressLine line(std::min<int>(a.budget, static_cast<int>(o.space->size())), a.json);
  DriveTuning(tuning, kernel, judge, [&](const Config& config, const JudgeResult& r) {
    o.verdicts[config] = r.evaluation;
    line.Add(MeasurementOf(r.evaluation));
  });
  line.Finish();
  o.session = tuning.session();
  o.executor = judge.counters().ToJson();
  if (!a.record.empty()) {
    std::map<Point, Measurement> records;
    for (const TraceEntry& e : o.session->trace()) records[e.point] = e.result;
    RuleContext context = device.context;
    context.defaults = kernel.ResolveConfig({});
    WriteKernelTunerCache(a.record, *o.space, records, kernel.EntryNames(), first.Label(),
                          RuleContextToJson(context));
  }
  return Report(a, o);
}

}  // namespace

int RunTune(TuneArgs a, const std::string& self) {
  if (a.strategy.empty()) a.strategy = kDefaultStrategy;
  if (!MakeStrategy(a.strategy)) {
    std::string names;
    for (const auto& n : StrategyNames()) names += " " + n;
    throw InputError("--strategy", 0, a.strategy, "unknown strategy (known:" + names + ")");
  }
  return a.replay.empty() ? RunLive(a, self) : RunReplay(a);
}

}  // namespace kf
