#pragma once
// The search loop (MAP-Elites, steady state): the baseline seeds the archive; then, until the
// budget is spent, a parent is selected from the archive with inspirations from other cells, the
// proposer turns them into a new template, the tuner searches that template's configurations with
// a per-proposal budget (two-level search), and the best correct configuration is offered to the
// archive at the cell the evaluator classified it in.
//
// Every evaluation goes through the store first: a candidate already judged in this run is
// answered from there. The loop's choices depend only on the seed and on verdicts, so a resumed
// run replays its stored verdicts to the point where it was killed and goes on from there, with
// nothing judged twice and nothing lost.

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/evaluation.hpp"
#include "core/task.hpp"
#include "propose/proposer.hpp"
#include "search/archive.hpp"
#include "store/store.hpp"
#include "tune/rules.hpp"

namespace kf {

// Judges one candidate: the supervised executor in a live run.
class Judge {
 public:
  virtual ~Judge() = default;
  virtual Evaluation Evaluate(const Kernel& kernel, const Config& config) = 0;
  // The candidates the search expects to evaluate next, most likely first; a judge may compile
  // them ahead. Nothing is judged by this call.
  virtual void Expect(const Kernel& kernel, const std::vector<Config>& configs) {
    (void)kernel;
    (void)configs;
  }
};

struct SearchSettings {
  std::string run;                                          // the store's run
  std::string device;                                       // part of every evaluation key
  nlohmann::json eval_settings = nlohmann::json::object();  // sizes, seeds: part of every key
  int budget = 60;                                          // evaluations, the baseline's included
  double seconds = 0;                                       // wall-clock limit; 0 = none
  int tune_budget = 4;                                      // evaluations per proposal
  uint64_t seed = 1;
  Selection selection = Selection::kUniform;
  int inspirations = 2;
  std::string strategy;          // tuning strategy ("" = the default)
  int max_empty_proposals = 25;  // consecutive parents that gave nothing new, before stopping
  Env device_env;                // device properties and benchmark sizes, for constraints
  RuleContext rule_context;      // op class and device; the kernel's part is filled per proposal
  std::vector<Rule> rules;
};

struct SearchEvaluation {
  std::string kernel_id, origin;
  Config config;
  Evaluation evaluation;
  bool from_store = false;  // replayed from the store (a resumed run), not judged now
};

struct SearchProgress {
  int evaluations = 0, budget = 0, proposals = 0, cells = 0, judged_now = 0;
  double best_speedup = 0, seconds = 0;
};

struct SearchResult {
  Archive archive;
  std::vector<SearchEvaluation> trace;
  std::vector<nlohmann::json> proposals;  // one line each: origin, kernel id, cell, best speedup
  int judged_now = 0, from_store = 0;
  std::map<std::string, int> verdicts;
  double seconds = 0;
  std::string stop_reason;
};

using ProgressFn = std::function<void(const SearchProgress&)>;

SearchResult RunSearch(const Task& task, Language language, Proposer& proposer, Judge& judge,
                       Store& store, const SearchSettings& settings,
                       const ProgressFn& progress = nullptr);

}  // namespace kf
