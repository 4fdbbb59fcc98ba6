#include "cli/suite_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <set>

#include "core/input_error.hpp"
#include "core/task_library.hpp"
#include "core/worker_error.hpp"
#include "report/suite_figures.hpp"
#include "store/store.hpp"

namespace kf {

namespace {

namespace fs = std::filesystem;

// DIR... as task folders: a folder with a task.toml is one; a folder without one stands for its
// subfolders that have one, in name order; anything else is a bundled task's name.
std::vector<std::string> TaskArguments(const std::vector<std::string>& dirs) {
  std::vector<std::string> out;
  for (const std::string& d : dirs) {
    if (fs::exists(fs::path(d) / "task.toml") || !fs::is_directory(d)) {
      out.push_back(d);
      continue;
    }
    std::vector<std::string> inside;
    for (const fs::directory_entry& e : fs::directory_iterator(d))
      if (e.is_directory() && fs::exists(e.path() / "task.toml")) inside.push_back(e.path());
    if (inside.empty())
      throw InputError(d, 0, "DIR",
                       "neither a task folder (no task.toml) nor a folder of task folders");
    std::sort(inside.begin(), inside.end());
    out.insert(out.end(), inside.begin(), inside.end());
  }
  return out;
}

struct SuiteTask {
  Task task;
  std::string run;
  bool stored = false;  // the store holds its run: --resume continues it
};

// Every task loaded and every run name checked before anything is judged: a bad task file, two
// tasks of one name or a run the store holds without --resume is an input error up front.
std::vector<SuiteTask> PlanSuite(const SuiteArgs& a) {
  std::vector<SuiteTask> plan;
  std::set<std::string> names;
  for (const std::string& t : TaskArguments(a.dirs)) {
    SuiteTask st{FindTask(t), "", false};
    if (!names.insert(st.task.name).second)
      throw InputError(t, 0, "DIR", "a second task named " + st.task.name + " in the suite");
    st.run = a.name + "-" + st.task.name;
    try {
      CheckRunName(st.run);
    } catch (const InputError&) {
      throw InputError("--name", 0, st.run,
                       "a suite's run is NAME-TASK: at most 100 letters, digits, '.', '_' and "
                       "'-', not starting with '.' or '-'");
    }
    plan.push_back(std::move(st));
  }
  std::unique_ptr<Store> store = OpenStore(a.search.store);  // once the names are good
  for (SuiteTask& st : plan) {
    st.stored = store->FindRun(st.run).has_value();
    if (st.stored && !a.resume)
      throw InputError(RedactStoreUrl(a.search.store), 0, "run " + st.run,
                       "exists already: continue the suite with --resume, or name another with "
                       "--name");
  }
  return plan;
}

OptimizeArgs TaskArgs(const SuiteArgs& a, const SuiteTask& t) {
  OptimizeArgs args = a.search;
  args.task = t.task.dir;
  args.json = false;
  args.run = t.run;
  args.resume_flag = t.stored;
  return args;
}

std::string RowLine(const SuiteRow& r) {
  if (r.status == SuiteStatus::kError) return "error: " + r.message;
  if (r.status == SuiteStatus::kNoCorrect) return "no correct kernel";
  return fmt::format("correct, {} {}, {} against {}", r.kernel, r.config,
                     r.eager_speedup ? fmt::format("{:.3f}x", *r.eager_speedup) : "-",
                     r.eager_baseline);
}

SuiteRow ErrorRow(const SuiteTask& t, const std::string& message) {
  SuiteRow row;
  row.problem = t.task.name;
  row.run = t.run;
  row.torch_reference = !t.task.torch_reference.empty();
  row.status = SuiteStatus::kError;
  row.message = message;
  return row;
}

// One task's search, as a row; a failure of this task (its reference raising, a kernel language
// it has no baseline for) is its row's error and the suite goes on. No device stops the suite.
SuiteRow SearchTask(const SuiteArgs& a, const SuiteTask& t, const std::string& self) {
  try {
    PreparedRun p = PrepareRun(TaskArgs(a, t));
    SearchOutcome o = SearchOnThisHost(p, self);
    SuiteRow row = SuiteRowOf(o.summary, !p.task.torch_reference.empty());
    row.judged_now = o.totals.search.judged_now + o.totals.reverified_now;
    row.task_dir = p.task.dir;
    row.budget = p.args.settings.search.budget;
    return row;
  } catch (const WorkerError& e) {
    if (e.exit_code() == 3) throw;
    return ErrorRow(t, e.what());
  } catch (const std::exception& e) {
    return ErrorRow(t, e.what());
  }
}

}  // namespace

int RunSuite(const SuiteArgs& a, const std::string& self) {
  std::vector<SuiteTask> plan = PlanSuite(a);
  std::string dirs;
  for (const std::string& d : a.dirs) dirs += " " + d;
  fmt::print(stderr, "suite {}: {} tasks, budget {} each (a resumed run keeps its own), store {}\n",
             a.name, plan.size(), a.search.settings.search.budget, RedactStoreUrl(a.search.store));
  fmt::print(stderr, "(if it is interrupted: kfoundry suite{} --store {} --name {} --resume)\n",
             dirs, AbsoluteStore(a.search.store), a.name);
  std::vector<SuiteRow> rows;
  int judged_now = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    const SuiteTask& t = plan[i];
    fmt::print(stderr, "suite [{}/{}] {}: {} run {}\n", i + 1, plan.size(), t.task.name,
               t.stored ? "resuming" : "starting", t.run);
    SuiteRow row = SearchTask(a, t, self);
    if (row.task_dir.empty()) row.task_dir = t.task.dir;
    judged_now += row.judged_now;
    fmt::print(stderr, "suite [{}/{}] {}: {}\n", i + 1, plan.size(), t.task.name, RowLine(row));
    rows.push_back(std::move(row));
  }
  SuiteFigures figures = ComputeSuiteFigures(rows);
  if (a.search.json) {
    nlohmann::json out = {{"suite", a.name},
                          {"store", AbsoluteStore(a.search.store)},
                          {"judged_now", judged_now},
                          {"figures", SuiteFiguresToJson(figures)},
                          {"problems", nlohmann::json::array()}};
    for (const SuiteRow& r : rows) out["problems"].push_back(SuiteRowToJson(r));
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  fmt::print("suite       {} ({} judged now), store {}\n", a.name, judged_now,
             AbsoluteStore(a.search.store));
  fmt::print("{}", SuiteText(rows, figures));
  return 0;
}

}  // namespace kf
