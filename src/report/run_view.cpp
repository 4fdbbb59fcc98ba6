#include "report/run_view.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>

#include "core/codec.hpp"
#include "core/identity.hpp"
#include "core/task_library.hpp"
#include "search/run_summary.hpp"

namespace kf {

namespace {

using nlohmann::json;

json OrNull(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

std::string FileName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// What the run's last "finish" event says (stop reason, devices), or null.
json LastFinish(Store& store, const std::string& run) {
  json finish = nullptr;
  for (const json& e : store.Events(run))
    if (e.value("kind", "") == "finish") finish = e.value("data", json::object());
  return finish;
}

// The ceilings the run's fractions were taken against (each ok evaluation has bandwidth / peak
// bandwidth, and for a task with FLOPs the rate / peak rate), and, with the task, its bytes and
// FLOPs at the timed size set.
json Roofline(const std::vector<StoredEvaluation>& all, const Task* task) {
  std::vector<double> peaks, compute_peaks;
  std::string sizes;
  for (const StoredEvaluation& s : all) {
    const Evaluation& ev = s.evaluation;
    if (ev.status != Status::kOk) continue;
    if (ev.bandwidth_gbs && ev.roofline_fraction && *ev.roofline_fraction > 0)
      peaks.push_back(*ev.bandwidth_gbs / *ev.roofline_fraction);
    if (ev.gflops && ev.compute_fraction && *ev.compute_fraction > 0)
      compute_peaks.push_back(*ev.gflops / *ev.compute_fraction);
    if (sizes.empty()) sizes = ev.bench_sizes;
  }
  auto median_or_null = [](const std::vector<double>& v) {
    return v.empty() ? json(nullptr) : json(Median(v));
  };
  json out = {{"peak_gbs", median_or_null(peaks)},
              {"peak_gflops", median_or_null(compute_peaks)},
              {"sizes", sizes},
              {"min_bytes", nullptr},
              {"flops", nullptr},
              {"flops_per_byte", nullptr}};
  if (!task || sizes.empty()) return out;
  for (const SizeSet& set : task->bench_sizes) {
    if (set.name != sizes) continue;
    try {
      Env env = SizesEnv(set.sizes);
      double bytes = task->min_bytes.Eval(env);
      out["min_bytes"] = bytes;
      if (task->flops) {
        double flops = task->flops->Eval(env);
        out["flops"] = flops;
        if (bytes > 0) out["flops_per_byte"] = flops / bytes;
      }
    } catch (const ExprError&) {
      // A task edited since the run: no figures rather than wrong ones.
    }
  }
  return out;
}

json EvaluationFigures(const StoredEvaluation& s, size_t log_limit) {
  const Evaluation& ev = s.evaluation;
  json j = {{"seq", s.seq},
            {"config", ConfigToJson(s.config)},
            {"status", StatusName(ev.status)},
            {"reason", ev.reason},
            {"purpose", s.purpose},
            {"proposal", s.proposal},
            {"device", ev.device},
            {"at", s.created_at},
            {"time_ms", ev.time ? json(ev.time->median_ms) : json(nullptr)},
            {"min_ms", ev.time ? json(ev.time->min_ms) : json(nullptr)},
            {"max_ms", ev.time ? json(ev.time->max_ms) : json(nullptr)},
            {"runs", ev.time ? json(ev.time->runs) : json(nullptr)},
            {"baseline_ms", ev.baseline_time ? json(ev.baseline_time->median_ms) : json(nullptr)},
            {"speedup", OrNull(ev.speedup)},
            {"gbs", OrNull(ev.bandwidth_gbs)},
            {"roofline", OrNull(ev.roofline_fraction)},
            {"gflops", OrNull(ev.gflops)},
            {"compute", OrNull(ev.compute_fraction)},
            {"compared", ev.compared},
            {"max_abs_err", ev.compared ? json(ev.max_abs_err) : json(nullptr)},
            {"max_rel_err", ev.compared ? json(ev.max_rel_err) : json(nullptr)},
            {"bad_ratio", ev.compared ? json(ev.bad_ratio) : json(nullptr)},
            {"nan_count", ev.compared ? json(ev.nan_count) : json(nullptr)},
            {"cell", ev.descriptor},
            {"bench_sizes", ev.bench_sizes},
            {"hints", ev.hints},
            {"check_seeds", ev.check_seeds},
            {"phase_ms", ev.phase_ms}};
  std::string log = ev.compile_log;
  if (log_limit > 0 && log.size() > log_limit)
    log = log.substr(0, log_limit) + "\n[... cut: the whole log is in the store]";
  j["compile_log"] = log;
  return j;
}

// The proposer's trail of a proposal (model, prompt components, messages, replies, tokens).
json TrailOf(const ProposalRecord& r) {
  return r.outcome.value("proposer", json::object());
}

json ComponentsOf(const json& trail) {
  json out = json::array();
  for (const json& c : trail.value("components", json::array()))
    out.push_back(c.is_string() ? c : json(c.dump()));
  return out;
}

}  // namespace

std::optional<Task> TaskOfRun(const RunInfo& run, std::string* why) {
  std::string dir = run.settings.is_object() ? run.settings.value("task_dir", "") : "";
  try {
    return FindTask(!dir.empty() && std::filesystem::is_directory(dir) ? dir : run.task);
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return std::nullopt;
  }
}

std::optional<double> StoreTimeSeconds(const std::string& text) {
  std::tm tm{};
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &month, &day, &hour, &minute,
                  &second, &consumed) != 6)
    return std::nullopt;
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  double seconds = static_cast<double>(timegm(&tm));
  std::string rest = text.substr(static_cast<size_t>(consumed));
  if (rest.size() > 1 && rest[0] == '.') {
    double fraction = 0, scale = 0.1;
    for (size_t i = 1; i < rest.size() && rest[i] >= '0' && rest[i] <= '9'; ++i, scale /= 10)
      fraction += (rest[i] - '0') * scale;
    seconds += fraction;
  }
  return seconds;
}

json RunView(Store& store, const RunInfo& info, const DescriptorSpace& space, const Task* task) {
  const std::string& run = info.name;
  std::vector<StoredEvaluation> all = store.RunEvaluations(run);
  RunSummary s = SummarizeRun(store, info, store.RunProposals(run), all);
  RunStats stats = store.Stats(run);
  json finish = LastFinish(store, run);

  json out;
  out["run"] = {
      {"name", info.name},
      {"task", info.task},
      {"device", info.device},
      {"created_at", info.created_at},
      {"settings", info.settings},
      {"finished", stats.Finished()},
      {"stop_reason", finish.is_object() ? finish.value("stop_reason", "") : ""},
      {"devices", finish.is_object() ? finish.value("devices", json::array()) : json::array()}};
  json behaviour = json::array();
  for (const Dimension& d : space.dimensions())
    behaviour.push_back({{"name", d.name}, {"levels", d.levels}});
  out["behaviour"] = behaviour;
  double baseline_ms = RunBaselineMs(s);
  out["baseline_ms"] = baseline_ms > 0 ? json(baseline_ms) : json(nullptr);
  out["roofline"] = Roofline(all, task);

  // Kernels: the proposed ones from their proposals, the rest (the baseline) from the store.
  json kernels = json::object();
  std::map<std::string, const ProposalRecord*> proposal_of;
  for (const ProposalRecord& r : s.proposals) {
    if (!r.proposal) continue;
    std::string id = KernelId(r.proposal->kernel);
    if (proposal_of.count(id)) continue;
    proposal_of[id] = &r;
    json trail = TrailOf(r);
    kernels[id] = {{"name", FileName(r.proposal->kernel.path)},
                   {"language", LanguageName(r.proposal->kernel.language)},
                   {"proposal", r.index},
                   {"parent", r.proposal->parent_kernel_id},
                   {"origin", r.proposal->origin},
                   {"mutations", r.proposal->mutations},
                   {"proposer", r.request.value("by", "")},
                   {"state", ProposalStateName(r.state)},
                   {"grade", r.outcome.value("grade", 0)},
                   {"model", trail.value("model", "")},
                   {"cost", trail.value("cost", 0.0)}};
  }
  std::optional<double> t0;
  for (const StoredEvaluation& e : all) {
    if (std::optional<double> t = StoreTimeSeconds(e.created_at)) t0 = t0 ? std::min(*t0, *t) : *t;
  }
  json rows = json::array();
  std::map<std::string, int> evaluations_of;
  std::map<std::string, double> best_of;
  for (const StoredEvaluation& e : all) {
    const Evaluation& ev = e.evaluation;
    if (!kernels.contains(e.kernel_id)) {
      std::optional<Kernel> k = store.FindKernel(e.kernel_id);
      bool baseline = e.proposal < 0 && e.purpose == "search";
      kernels[e.kernel_id] = {{"name", k ? FileName(k->path) : e.kernel_id},
                              {"language", k ? json(LanguageName(k->language)) : json("")},
                              {"proposal", -1},
                              {"parent", ""},
                              {"origin", baseline ? "baseline" : "stored"},
                              {"mutations", json::array()},
                              {"proposer", ""},
                              {"state", baseline ? "baseline" : "done"},
                              {"grade", 0},
                              {"model", ""},
                              {"cost", 0.0}};
    }
    ++evaluations_of[e.kernel_id];
    if (ev.status == Status::kOk && ev.speedup && e.purpose == "search")
      best_of[e.kernel_id] = std::max(best_of[e.kernel_id], *ev.speedup);
    std::optional<double> t = StoreTimeSeconds(e.created_at);
    rows.push_back({e.seq, t && t0 ? json(*t - *t0) : json(nullptr), StatusName(ev.status),
                    e.kernel_id, e.proposal, ev.time ? json(ev.time->median_ms) : json(nullptr),
                    ev.time ? json(ev.time->min_ms) : json(nullptr),
                    ev.time ? json(ev.time->max_ms) : json(nullptr), OrNull(ev.speedup),
                    OrNull(ev.bandwidth_gbs), OrNull(ev.roofline_fraction), ev.descriptor,
                    ConfigToJson(e.config), ev.device, e.purpose});
  }
  for (auto& [id, k] : kernels.items()) {
    k["evaluations"] = evaluations_of[id];
    k["best_speedup"] = best_of.count(id) ? json(best_of[id]) : json(nullptr);
  }
  out["columns"] = {"seq",      "t",      "status", "kernel",  "proposal",
                    "time_ms",  "min_ms", "max_ms", "speedup", "gbs",
                    "roofline", "cell",   "config", "device",  "purpose"};
  out["evaluations"] = std::move(rows);
  out["kernels"] = std::move(kernels);

  json proposals = json::array();
  for (const ProposalRecord& r : s.proposals) {
    json trail = TrailOf(r);
    std::string reason = r.outcome.value("reason", "");
    if (reason.empty()) reason = r.outcome.value("failure", "");
    proposals.push_back(
        {{"index", r.index},
         {"state", ProposalStateName(r.state)},
         {"kernel", r.proposal ? json(KernelId(r.proposal->kernel)) : json(nullptr)},
         {"parent", r.proposal ? r.proposal->parent_kernel_id : ""},
         {"origin", r.proposal ? r.proposal->origin : ""},
         {"proposer", r.request.value("by", "")},
         {"mutations", r.proposal ? json(r.proposal->mutations) : json::array()},
         {"grade", r.outcome.value("grade", 0)},
         {"reason", reason},
         {"model", trail.value("model", "")},
         {"components", ComponentsOf(trail)},
         {"prompt_tokens", trail.value("prompt_tokens", 0)},
         {"completion_tokens", trail.value("completion_tokens", 0)},
         {"cost", trail.value("cost", 0.0)},
         {"evaluations", r.outcome.value("evaluations", json(nullptr))}});
  }
  out["proposals"] = std::move(proposals);

  json archive = json::array();
  for (const auto& [cell, e] : s.archive.cells()) {
    archive.push_back({{"cell", cell},
                       {"kernel", e.kernel_id},
                       {"name", FileName(e.kernel.path)},
                       {"config", ConfigToJson(e.config)},
                       {"speedup", e.speedup},
                       {"time_ms", e.time_ms},
                       {"device", e.device}});
  }
  out["archive"] = std::move(archive);

  json finals = json::array();
  for (const FinalCheck& f : s.finals) {
    std::vector<double> times, fractions, compute;
    for (const Evaluation& ev : f.runs) {
      if (ev.status != Status::kOk) continue;
      if (ev.time) times.push_back(ev.time->median_ms);
      if (ev.roofline_fraction) fractions.push_back(*ev.roofline_fraction);
      if (ev.compute_fraction) compute.push_back(*ev.compute_fraction);
    }
    finals.push_back(
        {{"kernel", f.elite.kernel_id},
         {"name", FileName(f.elite.kernel.path)},
         {"config", ConfigToJson(f.elite.config)},
         {"verified", f.verified},
         {"speedups", f.speedups},
         {"median", f.median},
         {"runs", f.runs.size()},
         {"time_ms", times.empty() ? json(nullptr) : json(Median(times))},
         {"min_ms",
          times.empty() ? json(nullptr) : json(*std::min_element(times.begin(), times.end()))},
         {"max_ms",
          times.empty() ? json(nullptr) : json(*std::max_element(times.begin(), times.end()))},
         {"roofline", fractions.empty() ? json(nullptr) : json(Median(fractions))},
         {"compute", compute.empty() ? json(nullptr) : json(Median(compute))},
         {"device", f.device}});
  }
  out["finals"] = std::move(finals);
  if (const FinalCheck* best = s.Best()) {
    out["best"] = {{"kernel", best->elite.kernel_id},
                   {"config", ConfigToJson(best->elite.config)},
                   {"speedup", best->median}};
  }
  out["verdicts"] = s.verdicts;
  out["budget"] = s.budget;  // evaluations: new kernels, tuning, deeper tuning of elites
  out["proposal_states"] = s.proposal_states;
  out["llm"] = LlmTotals(s.proposals, store.RunPromptVersions(run));
  out["version"] = store.RunVersion(run);
  return out;
}

namespace {

// One kernel's detail from the run's records; `evaluations` are the run's evaluations of it.
json DetailOf(Store& store, const Kernel& kernel, const std::string& kernel_id,
              const ProposalRecord* record, const std::vector<const StoredEvaluation*>& evaluations,
              bool with_parent_source, size_t log_limit) {
  json figures = json::array();
  for (const StoredEvaluation* e : evaluations) figures.push_back(EvaluationFigures(*e, log_limit));
  json out = {{"id", kernel_id},
              {"name", FileName(kernel.path)},
              {"language", LanguageName(kernel.language)},
              {"source", kernel.source},
              {"parent", ""},
              {"parent_source", nullptr},
              {"proposal", nullptr},
              {"evaluations", std::move(figures)}};
  if (!record) return out;
  const Proposal& p = *record->proposal;
  out["parent"] = p.parent_kernel_id;
  if (with_parent_source && !p.parent_kernel_id.empty()) {
    if (std::optional<Kernel> parent = store.FindKernel(p.parent_kernel_id))
      out["parent_source"] = parent->source;
  }
  json outcome = record->outcome;
  outcome.erase("proposer");
  out["proposal"] = {{"index", record->index},
                     {"state", ProposalStateName(record->state)},
                     {"proposer", record->request.value("by", "")},
                     {"origin", p.origin},
                     {"mutations", p.mutations},
                     {"notes", p.notes},
                     {"request", record->request},
                     {"outcome", outcome},
                     {"trail", TrailOf(*record)}};
  return out;
}

// The first proposal of each proposed kernel.
std::map<std::string, const ProposalRecord*> ProposalsByKernel(
    const std::vector<ProposalRecord>& proposals) {
  std::map<std::string, const ProposalRecord*> out;
  for (const ProposalRecord& r : proposals)
    if (r.proposal) out.emplace(KernelId(r.proposal->kernel), &r);
  return out;
}

}  // namespace

json KernelDetail(Store& store, const std::string& run, const std::string& kernel_id,
                  size_t log_limit) {
  if (!store.FindRun(run)) throw NotFound("no run '" + run + "' in this store");
  std::vector<StoredEvaluation> all = store.RunEvaluations(run);
  std::vector<ProposalRecord> proposals = store.RunProposals(run);
  auto by_kernel = ProposalsByKernel(proposals);
  auto it = by_kernel.find(kernel_id);
  const ProposalRecord* record = it == by_kernel.end() ? nullptr : it->second;
  std::vector<const StoredEvaluation*> evaluations;
  for (const StoredEvaluation& e : all)
    if (e.kernel_id == kernel_id) evaluations.push_back(&e);
  std::optional<Kernel> kernel = store.FindKernel(kernel_id);
  if (!kernel || (!record && evaluations.empty()))
    throw NotFound("no kernel '" + kernel_id + "' in run '" + run + "'");
  return DetailOf(store, *kernel, kernel_id, record, evaluations, true, log_limit);
}

json KernelDetails(Store& store, const std::string& run, size_t log_limit) {
  if (!store.FindRun(run)) throw NotFound("no run '" + run + "' in this store");
  std::vector<StoredEvaluation> all = store.RunEvaluations(run);
  std::vector<ProposalRecord> proposals = store.RunProposals(run);
  auto by_kernel = ProposalsByKernel(proposals);
  std::map<std::string, std::vector<const StoredEvaluation*>> evaluations;
  for (const StoredEvaluation& e : all) evaluations[e.kernel_id].push_back(&e);
  for (const auto& [id, r] : by_kernel) evaluations[id];  // proposed, maybe never evaluated
  json out = json::object();
  for (const auto& [id, list] : evaluations) {
    auto it = by_kernel.find(id);
    const ProposalRecord* record = it == by_kernel.end() ? nullptr : it->second;
    std::optional<Kernel> kernel = record ? record->proposal->kernel : store.FindKernel(id);
    if (kernel) out[id] = DetailOf(store, *kernel, id, record, list, false, log_limit);
  }
  return out;
}

json RunList(Store& store) {
  json runs = json::array();
  for (const RunInfo& r : store.Runs()) {
    RunStats stats = store.Stats(r.name);
    std::optional<double> best;
    for (const ArchiveEntry& e : store.Archive(r.name))
      best = best ? std::max(*best, e.speedup) : e.speedup;
    runs.push_back({{"name", r.name},
                    {"task", r.task},
                    {"device", r.device},
                    {"created_at", r.created_at},
                    {"evaluations", stats.evaluations},
                    {"proposals", stats.proposals},
                    {"best_speedup", OrNull(best)},
                    {"finished", stats.Finished()}});
  }
  return runs;
}

}  // namespace kf
