#pragma once
// The search (MAP-Elites, steady state, asynchronous). The task's baseline is proposal 0 and
// seeds the archive; then up to `in_flight` proposals are out at once: for each, a parent and
// inspirations are selected from the archive (a value snapshot) with a target cell, the proposer
// is asked on a worker thread, and the kernel that comes back is tuned ask/tell (a TuneTemplate
// per proposal); the scheduler keeps enough candidates at the judge that its builders and every
// device stay busy. Each verdict is classified (a stage of the loop, from the artifact's
// listing), passed through the callbacks (the store first), and told to its proposal's tuner in
// the order the tuner asked; a proposal whose tuning is done offers its best correct
// configuration to the archive.
//
// Every proposal and verdict is in the store as it happens. A resumed run rebuilds the archive
// and the proposer's state from the store, re-submits what was in flight, and judges nothing
// twice: a candidate already judged in the run is answered from the store. Each proposal draws
// its random choices from its own stream (the run's seed and its index), so `in_flight = 1`
// gives one order for a seed.

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/candidate.hpp"
#include "core/device_info.hpp"
#include "core/evaluation.hpp"
#include "core/run_settings.hpp"
#include "core/task.hpp"
#include "host/judge.hpp"
#include "propose/proposer.hpp"
#include "search/archive.hpp"
#include "search/classifier.hpp"
#include "store/store.hpp"
#include "tune/rules.hpp"

namespace kf {

struct SearchSettings {
  std::string run;                                          // the store's run
  std::string devices;                                      // the run's devices: in every key
  nlohmann::json eval_settings = nlohmann::json::object();  // sizes, seeds: in every key
  // Budget, time, tuning, proposals in flight, seed, selection (its name; InputError for an
  // unknown one), strategy. Its `seconds` limits this invocation; its rules fields are read by
  // whoever fills `rules` below.
  SearchPolicy policy;
  Env device_env;            // device properties and benchmark sizes, for constraints
  RuleContext rule_context;  // op class and device; the kernel's part is filled per proposal
  std::vector<Rule> rules;
  DeviceInfo device;  // what proposal requests describe (the first device)
  double peak_gbs = 0;
  // How candidates are judged; each gets its parent's time as the time to beat.
  EvalSettings judging = EvalSettings::Fast();
};

struct SearchProgress {
  int evaluations = 0, budget = 0, judged_now = 0;
  int proposals = 0, proposals_out = 0, candidates_out = 0, cells = 0;
  double best_speedup = 0, seconds = 0;
};

// What happens after a verdict or a proposal's change of state: the store, the archive's events,
// the progress line. Called on the search's own thread, in the order given.
class SearchCallback {
 public:
  virtual ~SearchCallback() = default;
  virtual void OnEvaluation(const SearchEvaluation& e) { (void)e; }
  virtual void OnProposal(const ProposalRecord& record) { (void)record; }
  virtual void OnProgress(const SearchProgress& p) { (void)p; }
};

struct SearchResult {
  Archive archive;
  int evaluations = 0;  // of the run, in the store
  int judged_now = 0, from_store = 0;
  std::map<std::string, int> verdicts;           // of this invocation's evaluations
  std::map<std::string, int> proposal_verdicts;  // ok, nothing_new, bad_reply (this invocation)
  int proposals = 0;                             // of the run
  double seconds = 0;
  std::string stop_reason;
};

SearchResult RunSearch(const Task& task, Proposer& proposer, Judge& judge, Store& store,
                       const DescriptorSpace& descriptors, const SearchSettings& settings,
                       const std::vector<SearchCallback*>& callbacks = {});

// The seed of proposal `index`'s random stream ("tune" salts the tuner's).
uint64_t ProposalSeed(uint64_t run_seed, int index, uint64_t salt = 0);

}  // namespace kf
