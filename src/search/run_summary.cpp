#include "search/run_summary.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/input_error.hpp"

namespace kf {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

nlohmann::json ProposalLine(const ProposalRecord& r) {
  nlohmann::json line = r.outcome;
  line["proposal"] = r.index;
  line["state"] = ProposalStateName(r.state);
  if (r.proposal) {
    line["origin"] = r.proposal->origin;
    line["kernel_id"] = KernelId(r.proposal->kernel);
  }
  return line;
}

ArchiveOffer OfferToArchive(Archive& archive, const Proposal& proposal,
                            const std::string& kernel_id,
                            const std::optional<std::pair<Config, Evaluation>>& best) {
  ArchiveOffer offer;
  Cell cell;
  if (best) {
    const Evaluation& ev = best->second;
    Elite e;
    e.cell = ev.descriptor;
    e.kernel = proposal.kernel;
    e.config = best->first;
    e.speedup = ev.speedup.value_or(0);
    e.time_ms = ev.time ? ev.time->median_ms : 0;
    e.kernel_id = kernel_id;
    e.origin = proposal.origin;
    e.mutations = proposal.mutations;
    e.device = ev.device;
    e.evaluation = ev;
    cell = e.cell;
    offer.improved = archive.Offer(e);
    offer.elite = std::move(e);
  }
  if (proposal.parent_cell) {
    double parent_speedup = 0;
    if (auto it = archive.cells().find(*proposal.parent_cell); it != archive.cells().end())
      parent_speedup = it->second.speedup;
    offer.beat_parent = best && best->second.speedup.value_or(0) > parent_speedup;
    archive.RecordChild(*proposal.parent_cell, best ? cell : *proposal.parent_cell, offer.improved,
                        offer.beat_parent);
  }
  return offer;
}

void KeepIfBetter(BestByKernel& best, const Elite& e) {
  auto it = best.find(e.kernel_id);
  if (it == best.end())
    best.emplace(e.kernel_id, e);
  else if (e.speedup > it->second.speedup)
    it->second = e;
}

std::optional<std::pair<Config, Evaluation>> BestOf(const std::vector<StoredEvaluation>& stored,
                                                    int proposal) {
  std::optional<std::pair<Config, Evaluation>> best;
  for (const StoredEvaluation& s : stored) {
    if (s.proposal != proposal || s.purpose != "search") continue;
    const Evaluation& ev = s.evaluation;
    if (ev.status != Status::kOk || ev.descriptor.empty()) continue;
    if (!best || ev.speedup.value_or(0) > best->second.speedup.value_or(0))
      best = std::make_pair(s.config, ev);
  }
  return best;
}

RestoredArchive RebuildArchive(const std::vector<ProposalRecord>& records,
                               const std::vector<StoredEvaluation>& stored) {
  std::vector<const ProposalRecord*> done;
  for (const ProposalRecord& r : records) {
    if (r.state == ProposalState::kDone && r.proposal && r.done_seq > 0) done.push_back(&r);
  }
  std::sort(done.begin(), done.end(), [](const ProposalRecord* a, const ProposalRecord* b) {
    return a->done_seq < b->done_seq;
  });
  RestoredArchive out;
  for (const ProposalRecord* r : done) {
    ArchiveOffer offer = OfferToArchive(out.archive, *r->proposal, KernelId(r->proposal->kernel),
                                        BestOf(stored, r->index));
    if (offer.elite) KeepIfBetter(out.best_by_kernel, *offer.elite);
  }
  return out;
}

RunSummary ReadRunSummary(Store& store, const std::string& run) {
  std::optional<RunInfo> info = store.FindRun(run);
  if (!info) throw InputError("--run", 0, run, "no such run in the store");
  return SummarizeRun(store, *info, store.RunProposals(run), store.RunEvaluations(run));
}

RunSummary SummarizeRun(Store& store, RunInfo run, std::vector<ProposalRecord> proposals,
                        std::vector<StoredEvaluation> all) {
  RunSummary s;
  s.run = std::move(run);
  s.proposals = std::move(proposals);
  s.archive = RebuildArchive(s.proposals, all).archive;
  for (const ProposalRecord& r : s.proposals)
    ++s.proposal_states[std::string(ProposalStateName(r.state))];
  std::set<int> deepening, seen;
  for (const ProposalRecord& r : s.proposals)
    if (r.request.value("by", "") == "deepen") deepening.insert(r.index);
  s.budget = {{"new_kernels", 0}, {"tuning", 0}, {"deeper_tuning", 0}};
  for (StoredEvaluation& e : all) {
    if (e.purpose == "search") {
      ++s.budget[deepening.count(e.proposal)      ? "deeper_tuning"
                 : seen.insert(e.proposal).second ? "new_kernels"
                                                  : "tuning"];
      ++s.verdicts[std::string(StatusName(e.evaluation.status))];
      ++s.evaluations_by_device[e.evaluation.device];
      s.evaluations.push_back(std::move(e));
      continue;
    }
    // A final re-verification: grouped by candidate, in the order first re-verified.
    auto it = std::find_if(s.finals.begin(), s.finals.end(), [&](const FinalCheck& f) {
      return CandidateId(f.elite.kernel_id, f.elite.config) == e.candidate_id;
    });
    if (it == s.finals.end()) {
      FinalCheck f;
      for (const auto& [cell, elite] : s.archive.cells()) {
        if (elite.kernel_id == e.kernel_id && elite.config == e.config) f.elite = elite;
      }
      if (f.elite.kernel_id.empty()) {  // no longer an elite: describe it from the store
        if (std::optional<Kernel> k = store.FindKernel(e.kernel_id)) f.elite.kernel = *k;
        f.elite.kernel_id = e.kernel_id;
        f.elite.config = e.config;
      }
      f.verified = true;
      f.device = e.evaluation.device;
      s.finals.push_back(std::move(f));
      it = s.finals.end() - 1;
    }
    if (e.evaluation.status == Status::kOk && e.evaluation.speedup) {
      it->speedups.push_back(*e.evaluation.speedup);
    } else {
      it->verified = false;
    }
    it->runs.push_back(std::move(e.evaluation));
  }
  for (size_t i = 0; i < s.finals.size(); ++i) {
    FinalCheck& f = s.finals[i];
    f.median = Median(f.speedups);
    if (f.verified && (s.best < 0 || f.median > s.finals[static_cast<size_t>(s.best)].median))
      s.best = static_cast<int>(i);
  }
  if (const FinalCheck* best = s.Best()) {
    for (size_t i = 0; i < best->runs.size(); ++i) {
      double d = std::abs(*best->runs[i].speedup - best->median);
      if (s.best_run < 0 ||
          d < std::abs(*best->runs[static_cast<size_t>(s.best_run)].speedup - best->median))
        s.best_run = static_cast<int>(i);
    }
  }
  return s;
}

nlohmann::json LlmTotals(const std::vector<ProposalRecord>& proposals,
                         const std::vector<PromptVersionRecord>& versions) {
  int requests = 0, prompt_tokens = 0, completion_tokens = 0, repaired = 0, failed = 0;
  double cost = 0;
  nlohmann::json by_model = nlohmann::json::object();
  for (const ProposalRecord& p : proposals) {
    nlohmann::json trail = p.outcome.value("proposer", nlohmann::json::object());
    if (!trail.contains("exchanges")) continue;
    auto count = [&](const nlohmann::json& exchanges) {
      for (const auto& e : exchanges) {
        ++requests;
        failed += !e.value("ok", false);
        std::string model = e.value("model", "");
        if (!by_model.contains(model)) by_model[model] = {{"requests", 0}, {"cost", 0.0}};
        by_model[model]["requests"] = by_model[model].value("requests", 0) + 1;
        by_model[model]["cost"] = by_model[model].value("cost", 0.0) + e.value("cost", 0.0);
      }
    };
    count(trail["exchanges"]);
    if (trail.contains("meta")) count(trail["meta"].value("exchanges", nlohmann::json::array()));
    prompt_tokens += trail.value("prompt_tokens", 0) +
                     trail.value("meta", nlohmann::json::object()).value("prompt_tokens", 0);
    completion_tokens +=
        trail.value("completion_tokens", 0) +
        trail.value("meta", nlohmann::json::object()).value("completion_tokens", 0);
    cost += trail.value("cost", 0.0);
    repaired += trail.value("repaired", false);
  }
  int made = 0;
  for (const PromptVersionRecord& v : versions) made += v.made_by == "meta";
  return {{"requests", requests},
          {"failed_requests", failed},
          {"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"cost_usd", cost},
          {"repaired_replies", repaired},
          {"by_model", by_model},
          {"meta_versions", made}};
}

double RunBaselineMs(const RunSummary& s) {
  std::vector<double> times;
  for (const StoredEvaluation& e : s.evaluations)
    if (e.purpose == "search" && e.evaluation.baseline_time)
      times.push_back(e.evaluation.baseline_time->median_ms);
  if (times.empty()) return 0;
  std::nth_element(times.begin(), times.begin() + static_cast<long>(times.size() / 2), times.end());
  return times[times.size() / 2];
}

}  // namespace kf
