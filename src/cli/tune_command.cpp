#include "cli/tune_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli/device_context.hpp"
#include "core/evaluation_json.hpp"
#include "core/input_error.hpp"
#include "core/task_library.hpp"
#include "tune/live_objective.hpp"
#include "tune/rules.hpp"
#include "tune/strategy.hpp"

namespace kf {

namespace {

// Progress on stderr: a rewritten line on a terminal, a line every 10 evaluations otherwise.
class Progress : public Objective {
 public:
  Progress(Objective& inner, int budget, bool quiet)
      : inner_(inner), budget_(budget), quiet_(quiet), tty_(isatty(2)) {}
  Measurement Measure(const Point& p) override {
    Measurement m = inner_.Measure(p);
    ++done_;
    if (m.ok && (best_ < 0 || m.time_ms < best_)) best_ = m.time_ms;
    if (!quiet_ && (tty_ || done_ % 10 == 0 || done_ == budget_)) {
      fmt::print(stderr, "{}tune: {}/{} evaluated, best {} {}", tty_ ? "\r" : "", done_, budget_,
                 best_ < 0 ? std::string("none yet") : fmt::format("{:.4f} ms", best_),
                 tty_ ? "   " : "\n");
    }
    return m;
  }
  void Finish() const {
    if (!quiet_ && tty_) fmt::print(stderr, "\n");
  }

 private:
  Objective& inner_;
  int budget_, done_ = 0;
  double best_ = -1;
  bool quiet_, tty_;
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

}  // namespace

int RunTune(TuneArgs a, const std::string& self) {
  std::unique_ptr<TuningStrategy> strategy =
      MakeStrategy(a.strategy.empty() ? kDefaultStrategy : a.strategy);
  if (!strategy) {
    std::string names;
    for (const auto& n : StrategyNames()) names += " " + n;
    throw InputError("--strategy", 0, a.strategy, "unknown strategy (known:" + names + ")");
  }
  if (a.strategy.empty()) a.strategy = kDefaultStrategy;
  TuneBudget budget{a.budget, a.seconds};

  std::unique_ptr<ReplayObjective> replay;
  std::unique_ptr<Supervisor> supervisor;
  std::unique_ptr<Kernel> kernel;
  std::unique_ptr<LiveObjective> live;
  std::unique_ptr<SearchSpace> live_space;
  const SearchSpace* space = nullptr;
  Objective* objective = nullptr;
  std::string name;
  RuleContext context;
  if (!a.replay.empty()) {
    replay = ReplayObjective::Load(a.replay);
    space = &replay->space();
    objective = replay.get();
    name =
        fmt::format("replay {} ({} on {})", a.replay, replay->kernel_name(), replay->device_name());
    context = RecordedSpaceContext(*replay, a.replay);
  } else {
    if (a.task.empty() || a.kernel.empty())
      throw InputError("tune", 0, "TASK KERNEL", "give TASK and KERNEL, or --replay SPACE");
    Task task = FindTask(a.task);
    supervisor = std::make_unique<Supervisor>(Aimed(a.executor, self, task.dir, a.device, a.sizes));
    DeviceContext device = MakeDeviceContext(supervisor->executor_info(), task, a.sizes);
    kernel = std::make_unique<Kernel>(
        LoadKernelFile(ResolveTaskKernel(task, a.kernel, device.language)));
    if (kernel->params.empty())
      throw InputError(a.kernel, 0, "@param", "the kernel has no tunable parameters");
    // Constraints see the device's properties, as the evaluator's do.
    live_space = std::make_unique<SearchSpace>(SearchSpace::FromKernel(*kernel, device.env));
    context = device.context;
    context.source = kernel->source;
    context.defaults = kernel->ResolveConfig({});
    space = live_space.get();
    live = std::make_unique<LiveObjective>(*supervisor, *kernel, *space);
    objective = live.get();
    name = fmt::format("{} on {}", a.kernel, supervisor->executor_info().value("device", ""));
  }
  // Rules narrow the space and say what to try first, before any evaluation is spent.
  std::unique_ptr<RuledSpace> ruled;
  if (!a.no_rules) {
    std::string dir = a.rules_dir.empty() ? DefaultRulesDir() : a.rules_dir;
    ruled = std::make_unique<RuledSpace>(ApplyRules(LoadRules(dir), context, *space));
    space = &ruled->space;
  }
  if (!a.json) {
    fmt::print(stderr, "tuning {}: {} valid configurations, strategy {}, budget {}, seed {}\n",
               name, space->size(), a.strategy, a.budget, a.seed);
    if (ruled) {
      for (const std::string& r : ruled->applied) fmt::print(stderr, "rule: {}\n", r);
      for (const std::string& h : ruled->hints) fmt::print(stderr, "hint: {}\n", h);
    }
  }
  Progress progress(*objective, std::min<int>(a.budget, static_cast<int>(space->size())), a.json);
  TuningSession session(*space, budget, std::move(strategy), a.seed);
  session.MeasureFirst(StartingPoints(*space, context.defaults,
                                      ruled ? ruled->try_first : std::vector<Point>{}, a.budget));
  RunSession(session, progress);
  progress.Finish();

  if (!a.record.empty()) {
    std::map<Point, Measurement> records;
    for (const TraceEntry& e : session.trace()) records[e.point] = e.result;
    WriteKernelTunerCache(
        a.record, *space, records, kernel ? kernel->entry : replay->kernel_name(),
        supervisor ? supervisor->executor_info().value("device", "") : replay->device_name(),
        RuleContextToJson(context));
  }

  const TraceEntry* best = session.best();
  std::vector<const TraceEntry*> ranked = Ranked(session.trace());
  if (a.json) {
    nlohmann::json out;
    out["run"] = name;
    out["strategy"] = a.strategy;
    out["seed"] = a.seed;
    out["space_size"] = space->size();
    out["rules"] = ruled ? nlohmann::json(ruled->applied) : nlohmann::json::array();
    out["hints"] = ruled ? nlohmann::json(ruled->hints) : nlohmann::json::array();
    out["evaluations"] = session.evaluations();
    out["trace"] = TraceJson(*space, session.trace());
    out["archive"] = nlohmann::json::array();
    if (!best) {
      out["best"] = nullptr;
    } else if (live) {
      out["best"] = EvaluationToJson(live->evaluations().at(best->point));
    } else {
      out["best"] = {{"status", "ok"},
                     {"config", ConfigToJson(space->ToConfig(best->point))},
                     {"time_ms", {{"median", best->result.time_ms}}}};
    }
    if (supervisor) out["executor"] = supervisor->counters().ToJson();
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  if (!best) {
    fmt::print("no configuration succeeded in {} evaluations\n", session.evaluations());
    return 0;
  }
  fmt::print("best        {}  {:.4f} ms  (after {} evaluations)\n",
             ConfigToString(space->ToConfig(best->point)), best->result.time_ms,
             session.evaluations());
  if (live) {
    const Evaluation& ev = live->evaluations().at(best->point);
    if (ev.speedup)
      fmt::print("speedup     {:.3f}x over the baseline (same process)\n", *ev.speedup);
    if (ev.bandwidth_gbs) fmt::print("bandwidth   {:.1f} GB/s\n", *ev.bandwidth_gbs);
  }
  fmt::print("top:\n");
  for (size_t i = 0; i < std::min<size_t>(5, ranked.size()); ++i) {
    fmt::print("  {:.4f} ms  {}\n", ranked[i]->result.time_ms,
               ConfigToString(space->ToConfig(ranked[i]->point)));
  }
  int failed = 0;
  for (const TraceEntry& e : session.trace()) failed += !e.result.ok;
  if (failed) fmt::print("{} of {} configurations failed\n", failed, session.evaluations());
  return 0;
}

}  // namespace kf
