#pragma once
// Proposals as values. A request carries everything a proposer may use to write the next kernel:
// the task (by its content hash), the device, the rule engine's hints, the parent elite with its
// evaluation, inspirations from other cells with their figures, and the target cell (an empty
// or weak cell, described in words) so a proposer is asked for a different strategy, not a copy.
// The outcome is a new kernel with its provenance, nothing new, or a bad reply with its reason.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/device_info.hpp"
#include "core/elite.hpp"
#include "core/evaluation.hpp"
#include "core/kernel.hpp"

namespace kf {

struct Task;

struct TargetCell {
  Cell cell;
  std::string description;  // "memory: vectorised loads; algorithm: ...; coordination: ..."
  double speedup = 0;       // its elite's speedup; 0 when the cell is empty
};

struct ProposalRequest {
  int index = 0;      // the proposal's number within its run (0, 1, ...)
  uint64_t seed = 0;  // the proposal's own random stream, derived from the run's seed and index
  // The task by its folder's content hash (Task::id): a proposer holds the task itself, and a
  // request that crosses to another process carries no pointer.
  std::string task_id;
  Language language = Language::kOpenCL;
  DeviceInfo device;
  double peak_bandwidth_gbs = 0;
  std::vector<std::string> rule_hints;
  std::optional<Elite> parent;  // none: a kernel that needs no parent (a library template)
  std::optional<Elite> best;    // the run's best so far, when it is not the parent
  std::vector<Elite> inspirations;
  std::optional<TargetCell> target;
  std::vector<Cell> filled_cells;  // the archive's occupied cells
  // The behaviour space's words: each dimension's name and level names, so any cell can be told.
  std::vector<std::pair<std::string, std::vector<std::string>>> behaviour;
};

struct Proposal {
  Kernel kernel;
  std::string origin;            // "template rope_vec8.cl", "unroll of rope_vec8.cl"
  std::string parent_kernel_id;  // "" for a kernel from the library
  std::optional<Cell> parent_cell;
  std::vector<std::string> mutations;  // the lineage's mutations, oldest first
  std::string notes;                   // what the proposer said about it
};

enum class ProposalVerdict { kOk, kNothingNew, kBadReply };
std::string_view ProposalVerdictName(ProposalVerdict v);

struct ProposalOutcome {
  ProposalVerdict verdict = ProposalVerdict::kNothingNew;
  std::string reason;  // why, for anything but ok
  std::optional<Proposal> proposal;
  // What the proposer did to get it, stored with the proposal: for a model, the prompts and
  // replies, the model, the prompt components, tokens and cost.
  nlohmann::json trail = nlohmann::json::object();

  static ProposalOutcome Ok(Proposal p) { return {ProposalVerdict::kOk, "", std::move(p)}; }
  static ProposalOutcome NothingNew(std::string why) {
    return {ProposalVerdict::kNothingNew, std::move(why), std::nullopt};
  }
  static ProposalOutcome BadReply(std::string why) {
    return {ProposalVerdict::kBadReply, std::move(why), std::nullopt};
  }
};

// How far a proposal got, the credit its proposer's choices earn (Intel KernelFoundry's 0–5
// score): a bad reply or nothing new < it did not compile < it compiled but was wrong < correct
// < it improved its archive cell < it is the run's new best.
enum class Grade { kNothing = 0, kCompileError, kIncorrect, kCorrect, kImprovedCell, kNewBest };

// How far one proposal of a run has moved: issued (asked of the proposer), proposed (a kernel
// came back: being tuned), then one of the final states: done, nothing new, a bad reply, or
// abandoned (the search ended first). Stored and shown by name ("issued", "nothing_new", ...).
enum class ProposalState { kIssued, kProposed, kDone, kNothingNew, kBadReply, kAbandoned };
std::string_view ProposalStateName(ProposalState s);
std::optional<ProposalState> ParseProposalState(std::string_view name);

struct ProposalRecord {
  int index = 0;
  ProposalState state = ProposalState::kIssued;
  nlohmann::json request = nlohmann::json::object();  // parent, inspirations, target cell, seed
  std::optional<Proposal> proposal;                   // once proposed
  // verdict, reason, evaluations, best, "grade" (final states), "proposer" (its trail), ...
  nlohmann::json outcome = nlohmann::json::object();
  long long done_seq = 0;  // order of completion (0 while not done)

  bool Final() const {
    return state != ProposalState::kIssued && state != ProposalState::kProposed;
  }
  // The grade a final proposal earned; kNothing when it has none.
  Grade grade() const { return static_cast<Grade>(outcome.value("grade", 0)); }
};

// One verdict of the search, as its callbacks (the store first) get it: which proposal's
// candidate it judged, the candidate, the key it is stored under, and the evaluation.
struct SearchEvaluation {
  int proposal = -1;
  Kernel kernel;
  std::string kernel_id, origin, key;
  Config config;
  Evaluation evaluation;
  bool from_store = false;  // answered from the store (a resumed run), not judged now
};

}  // namespace kf
