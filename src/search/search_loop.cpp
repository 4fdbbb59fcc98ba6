#include "search/search_loop.hpp"

#include <algorithm>
#include <chrono>

#include "core/evaluation_json.hpp"
#include "core/input_error.hpp"
#include "tune/live_objective.hpp"
#include "tune/session.hpp"
#include "tune/strategy.hpp"

namespace kf {

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kExpectAtMost = 32;  // configurations of one proposal compiled ahead

// The tuner's objective for one proposal: every configuration through the store, then the judge.
class StoredObjective : public Objective {
 public:
  StoredObjective(Judge& judge, Store& store, const SearchSettings& settings, const Kernel& kernel,
                  const SearchSpace* space, std::string origin, SearchResult& result,
                  std::function<void()> after_each)
      : judge_(judge),
        store_(store),
        settings_(settings),
        kernel_(kernel),
        kernel_id_(KernelId(kernel)),
        space_(space),
        origin_(std::move(origin)),
        result_(result),
        after_each_(std::move(after_each)) {}

  Measurement Measure(const Point& point) override {
    Config config = space_ ? space_->ToConfig(point) : kernel_.ResolveConfig({});
    nlohmann::json key_settings = settings_.eval_settings;
    key_settings["run"] = settings_.run;  // every run measures its own candidates
    std::string key =
        EvaluationKey(CandidateId(kernel_id_, config), settings_.device, key_settings);
    SearchEvaluation e{kernel_id_, origin_, config, {}, false};
    if (std::optional<Evaluation> stored = store_.FindEvaluation(key)) {
      e.evaluation = std::move(*stored);
      e.from_store = true;
      ++result_.from_store;
    } else {
      e.evaluation = judge_.Evaluate(kernel_, config);
      store_.PutEvaluation(settings_.run, kernel_, config, key, e.evaluation);
      ++result_.judged_now;
    }
    const Evaluation& ev = e.evaluation;
    ++result_.verdicts[std::string(StatusName(ev.status))];
    Measurement m = MeasurementOf(ev);
    bool better =
        m.ok && (!has_best_ || ev.speedup.value_or(0) >
                                   result_.trace[best_index_].evaluation.speedup.value_or(0));
    result_.trace.push_back(std::move(e));
    if (better) {
      has_best_ = true;
      best_index_ = result_.trace.size() - 1;
    }
    any_now_ = any_now_ || !result_.trace.back().from_store;
    if (after_each_) after_each_();
    return m;
  }

  // The proposal's best correct configuration (by speedup), or nullptr.
  const SearchEvaluation* best() const { return has_best_ ? &result_.trace[best_index_] : nullptr; }
  bool judged_any_now() const { return any_now_; }

 private:
  Judge& judge_;
  Store& store_;
  const SearchSettings& settings_;
  const Kernel& kernel_;
  std::string kernel_id_;
  const SearchSpace* space_;  // nullptr: a kernel without parameters
  std::string origin_;
  SearchResult& result_;
  std::function<void()> after_each_;
  bool has_best_ = false;
  size_t best_index_ = 0;
  bool any_now_ = false;
};

}  // namespace

SearchResult RunSearch(const Task& task, Language language, Proposer& proposer, Judge& judge,
                       Store& store, const SearchSettings& settings, const ProgressFn& progress) {
  SearchResult result;
  const Clock::time_point start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  auto out_of_time = [&] { return settings.seconds > 0 && elapsed() >= settings.seconds; };
  auto remaining = [&] { return settings.budget - static_cast<int>(result.trace.size()); };
  const std::string strategy = settings.strategy.empty() ? kDefaultStrategy : settings.strategy;
  if (!MakeStrategy(strategy))
    throw InputError("--strategy", 0, settings.strategy, "unknown strategy");
  std::mt19937_64 rng(settings.seed);

  auto report = [&] {
    if (!progress) return;
    SearchProgress p;
    p.evaluations = static_cast<int>(result.trace.size());
    p.budget = settings.budget;
    p.proposals = static_cast<int>(result.proposals.size());
    p.cells = static_cast<int>(result.archive.cells().size());
    p.judged_now = result.judged_now;
    if (const Elite* b = result.archive.Best()) p.best_speedup = b->speedup;
    p.seconds = elapsed();
    progress(p);
  };

  // Tunes one kernel (or measures it once, when it has no parameters) and offers its best
  // correct configuration to the archive.
  auto try_kernel = [&](const Proposal& proposal) {
    const Kernel& kernel = proposal.kernel;
    nlohmann::json line = {{"origin", proposal.origin}, {"kernel_id", KernelId(kernel)}};
    std::optional<SearchSpace> space;
    std::optional<RuledSpace> ruled;
    const SearchSpace* tuned = nullptr;
    if (!kernel.params.empty()) {
      try {
        space = SearchSpace::FromKernel(kernel, settings.device_env);
        if (space->size() == 0) throw InputError(kernel.path, 0, "@constraint", "no valid config");
      } catch (const std::exception& e) {
        line["error"] = std::string("its parameter space is empty or invalid: ") + e.what();
        result.proposals.push_back(line);
        return;
      }
      RuleContext context = settings.rule_context;
      context.source = kernel.source;
      context.defaults = kernel.ResolveConfig({});
      ruled = ApplyRules(settings.rules, context, *space);
      tuned = &ruled->space;
    }
    StoredObjective objective(judge, store, settings, kernel, tuned, proposal.origin, result,
                              report);
    const int evaluations_before = static_cast<int>(result.trace.size());
    if (!tuned) {
      objective.Measure({});
    } else {
      int budget = std::min(settings.tune_budget, remaining());
      double seconds = settings.seconds > 0 ? std::max(1e-3, settings.seconds - elapsed()) : 0;
      // Each tuning session draws its seed from the run's stream, so a run stays repeatable.
      TuningSession session(*tuned, {budget, seconds}, MakeStrategy(strategy), rng());
      std::vector<Point> start =
          StartingPoints(*tuned, kernel.ResolveConfig({}), ruled->try_first, budget);
      // What the tuner will measure: its starting points (after the first, which is measured at
      // once), then the rest of a small space, which its strategy picks from.
      std::vector<Config> expected;
      for (size_t i = 1; i < start.size(); ++i) expected.push_back(tuned->ToConfig(start[i]));
      if (tuned->product_size() <= SearchSpace::kEnumerateLimit) {
        for (const Point& p : tuned->points()) {
          if (expected.size() >= kExpectAtMost) break;
          if (std::find(start.begin(), start.end(), p) == start.end())
            expected.push_back(tuned->ToConfig(p));
        }
      }
      judge.Expect(kernel, expected);
      session.MeasureFirst(start);
      RunSession(session, objective);
    }
    line["evaluations"] = static_cast<int>(result.trace.size()) - evaluations_before;
    const SearchEvaluation* best = objective.best();
    bool improved = false;
    Cell cell;
    if (best && !best->evaluation.descriptor.empty()) {
      Elite e;
      e.cell = best->evaluation.descriptor;
      e.kernel = kernel;
      e.config = best->config;
      e.speedup = best->evaluation.speedup.value_or(0);
      e.time_ms = best->evaluation.time ? best->evaluation.time->median_ms : 0;
      e.kernel_id = best->kernel_id;
      e.origin = proposal.origin;
      e.mutations = proposal.mutations;
      cell = e.cell;
      improved = result.archive.Offer(e);
      store.OfferArchiveCell(settings.run, {e.cell, CandidateId(e.kernel_id, e.config), e.speedup});
      line["cell"] = e.cell;
      line["speedup"] = e.speedup;
      line["config"] = ConfigToJson(e.config);
    }
    if (proposal.parent_cell) {
      double parent_speedup = 0;
      if (auto it = result.archive.cells().find(*proposal.parent_cell);
          it != result.archive.cells().end())
        parent_speedup = it->second.speedup;
      bool beat = best && best->evaluation.speedup.value_or(0) > parent_speedup;
      result.archive.RecordChild(*proposal.parent_cell, best ? cell : *proposal.parent_cell,
                                 improved, beat);
    }
    line["improved_archive"] = improved;
    result.proposals.push_back(line);
    if (objective.judged_any_now()) store.AddEvent(settings.run, "proposal", line);
    report();
  };

  // The baseline seeds the archive.
  auto baseline = task.baseline.find(language);
  if (baseline == task.baseline.end())
    throw InputError(task.dir + "/task.toml", 0, "kernels.baseline",
                     "no baseline for " + std::string(LanguageName(language)));
  Proposal seed;
  seed.kernel = LoadKernelFile(task.PathOf(baseline->second));
  seed.origin = "baseline " + baseline->second;
  try_kernel(seed);

  int empty = 0;
  while (true) {
    if (remaining() <= 0) {
      result.stop_reason = "budget spent";
      break;
    }
    if (out_of_time()) {
      result.stop_reason = "time budget spent";
      break;
    }
    const Elite* parent =
        proposer.HasUnparented() ? nullptr : result.archive.SelectParent(settings.selection, rng);
    ProposalContext context{task, language, parent,
                            result.archive.Inspirations(parent, settings.inspirations, rng),
                            &result.archive};
    std::optional<Proposal> proposal = proposer.Propose(context, rng);
    if (!proposal) {
      if (++empty >= settings.max_empty_proposals) {
        result.stop_reason = "the proposer had nothing new for any parent";
        break;
      }
      continue;
    }
    empty = 0;
    try_kernel(*proposal);
  }
  result.seconds = elapsed();
  return result;
}

}  // namespace kf
