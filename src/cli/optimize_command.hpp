#pragma once
// `kfoundry optimize`: the MAP-Elites search over kernels for a task on one or more devices,
// recorded in a store so a killed run resumes; then the top candidates are re-verified on fresh
// inputs on one device, re-timed interleaved with the baseline, and the best kernel is written to
// a file. What is printed is read back from the store.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/run_settings.hpp"
#include "core/task.hpp"
#include "host/judge.hpp"
#include "host/supervisor.hpp"
#include "propose/effects.hpp"
#include "search/run_summary.hpp"
#include "search/search_loop.hpp"
#include "store/store.hpp"

namespace kf {

struct OptimizeArgs {
  std::string task;  // a task folder or a bundled task's name
  std::string store = "sqlite:kfoundry.db", run, resume;
  bool json = false, resume_flag = false;
  RunSettings settings;  // stored with the run; a resumed run goes on with its stored ones
  // This process's own, never stored: the model's API key (docs/llm.md), the builder pool's
  // size and the executors' limits.
  std::string llm_api_key;
  int build_jobs = 0;
  ExecutorOptions executor;
};

int RunOptimize(OptimizeArgs args, const std::string& self);

// A run's name becomes a file name (`kfoundry report`) and a URL path segment (`kfoundry
// serve`): at most 100 letters, digits, '.', '_' and '-', not starting with '.' or '-'; else an
// InputError naming --run.
void CheckRunName(const std::string& name);

// The store's URL as a command the tool prints gives it: a SQLite path made absolute, so the
// command works pasted in another folder; a server's URL redacted.
std::string AbsoluteStore(const std::string& url);

// The body `optimize` and `coordinator` share, in two steps: the run opened in its store (a
// resumed run's stored settings applied, the task found, the options checked), then, with a judge,
// the search, the final re-verification, the summary and the best kernel's file.
struct PreparedRun {
  std::unique_ptr<Store> store;
  std::optional<RunInfo> existing;  // the run resumed
  Task task;
  OptimizeArgs args;  // with the settings the run goes on with
};
PreparedRun PrepareRun(OptimizeArgs args);

// What the body needs of the judge beyond the Judge contract.
struct JudgeSide {
  Judge& judge;
  DeviceInfo device;          // the (first) device: its kind is what proposals are written for
  double peak_gbs = 0;        // its measured copy bandwidth (0: unknown)
  std::string devices;        // the run's devices as every evaluation key names them
  std::string reverified_on;  // where the final re-verification runs, for the progress line
  std::string resume_command = "kfoundry optimize";  // what continues the run
  std::function<std::vector<RunnerStats>()> runner_stats;
  std::function<ExecutorCounters()> counters;  // empty: no executors of this process
  // Where the proposer's side effects happen (not owned): null, in this process.
  ChatService* chat = nullptr;
  CommandService* commands = nullptr;
};

// What a search leaves besides the store's records: what this process did, for the output.
struct SearchTotals {
  SearchResult search;
  int reverified_now = 0;
  std::vector<RunnerStats> runners;
  int build_jobs = 0;
  std::optional<ExecutorCounters> executors;  // a local judge's executors
  nlohmann::json llm;                         // requests, tokens, cost (--proposer llm)
};
struct SearchOutcome {
  RunSummary summary;  // read back from the store
  SearchTotals totals;
  std::string best_file;  // "" when nothing was verified
};
// The search, the final re-verification and the best kernel's file; progress on stderr.
SearchOutcome SearchRun(PreparedRun& run, const JudgeSide& side);
// The same judged by this host's devices (the run's --device), each in a supervised executor.
SearchOutcome SearchOnThisHost(PreparedRun& run, const std::string& self);
// optimize's output on stdout: the summary in text, or one JSON object (--json).
int PrintOutcome(const PreparedRun& run, const SearchOutcome& outcome);
int SearchAndReport(PreparedRun& run, const JudgeSide& side);  // SearchRun, then PrintOutcome

}  // namespace kf
