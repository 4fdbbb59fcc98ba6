#pragma once
// A run as the store holds it: its proposals and evaluations, the archive they build, the final
// re-verifications and the best kernel. The search rebuilds its archive from the same records
// when a run resumes, through the same offer a finished proposal makes, so a resumed archive is
// the one an uninterrupted run would hold. Reports read runs through this too.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/proposal.hpp"
#include "search/archive.hpp"
#include "store/store.hpp"

namespace kf {

// What a finished proposal gives the archive: its best correct configuration as an elite (if it
// has one), whether that improved the archive and whether it beat its parent's cell.
struct ArchiveOffer {
  std::optional<Elite> elite;
  bool improved = false, beat_parent = false;
};
ArchiveOffer OfferToArchive(Archive& archive, const Proposal& proposal,
                            const std::string& kernel_id,
                            const std::optional<std::pair<Config, Evaluation>>& best);

// The best correct, classified evaluation among a proposal's (highest speedup; the first of
// equals).
std::optional<std::pair<Config, Evaluation>> BestOf(const std::vector<StoredEvaluation>& stored,
                                                    int proposal);

// The best correct configuration of every kernel the finished proposals judged, elite or not, as
// an elite would hold it: what deeper tuning turns to once the elites' spaces are spent.
using BestByKernel = std::map<std::string, Elite>;
void KeepIfBetter(BestByKernel& best, const Elite& e);

struct RestoredArchive {
  Archive archive;
  BestByKernel best_by_kernel;
};
// The archive of the finished proposals, offered in the order they finished.
RestoredArchive RebuildArchive(const std::vector<ProposalRecord>& records,
                               const std::vector<StoredEvaluation>& stored);

// The final re-verification of one elite: every stored run of it.
struct FinalCheck {
  Elite elite;
  std::vector<Evaluation> runs;
  std::vector<double> speedups;  // of the ok runs
  bool verified = false;         // every run ok
  double median = 0;
  std::string device;  // where it was re-verified
};

struct RunSummary {
  RunInfo run;
  std::vector<StoredEvaluation> evaluations;  // the search's, in order
  std::vector<ProposalRecord> proposals;
  Archive archive;
  std::map<std::string, int> verdicts;         // of the search's evaluations
  std::map<std::string, int> proposal_states;  // done, nothing_new, bad_reply, ...
  std::map<std::string, int> evaluations_by_device;
  // What the search's evaluations went to: "new_kernels" (each proposal's first), "tuning" (the
  // rest of a proposal's), "deeper_tuning" (the search's own rounds on elites once the proposer
  // had nothing new).
  std::map<std::string, int> budget;
  std::vector<FinalCheck> finals;  // in the order re-verified
  // The verified final check with the highest median speedup, and its run closest to that median
  // (indices; -1 when nothing was verified).
  int best = -1, best_run = -1;
  const FinalCheck* Best() const { return best < 0 ? nullptr : &finals[static_cast<size_t>(best)]; }
  const Evaluation* BestRun() const {
    return best < 0 ? nullptr
                    : &finals[static_cast<size_t>(best)].runs[static_cast<size_t>(best_run)];
  }
};

// Throws InputError when the store has no such run.
RunSummary ReadRunSummary(Store& store, const std::string& run);
// The same from what was read already: the run's proposals and its evaluations in order (the
// store is asked only for kernels no longer in the archive).
RunSummary SummarizeRun(Store& store, RunInfo run, std::vector<ProposalRecord> proposals,
                        std::vector<StoredEvaluation> all);

double Median(std::vector<double> v);

// A proposal in one line: its outcome with its index, state, origin and kernel id.
nlohmann::json ProposalLine(const ProposalRecord& r);

// The baseline's median time over the run's search evaluations (each timed it beside its
// candidate); 0 when none did.
double RunBaselineMs(const RunSummary& s);

// A model proposer's totals over a run's proposals: requests (failed), tokens, cost (USD),
// repaired replies, by model, and the prompt component versions the meta step wrote.
nlohmann::json LlmTotals(const std::vector<ProposalRecord>& proposals,
                         const std::vector<PromptVersionRecord>& versions);

}  // namespace kf
