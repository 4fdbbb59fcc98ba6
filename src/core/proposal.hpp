#pragma once
// Proposals as values. A request carries everything a proposer may use to write the next kernel:
// the task (through its codec), the device, the rule engine's hints, the parent elite with its
// evaluation, inspirations from other cells with their figures, and the target cell (an empty
// or weak cell, described in words) so a proposer is asked for a different strategy, not a copy.
// The outcome is a new kernel with its provenance, nothing new, or a bad reply with its reason.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/device_info.hpp"
#include "core/elite.hpp"
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
  const Task* task = nullptr;  // not owned
  Language language = Language::kOpenCL;
  DeviceInfo device;
  double peak_bandwidth_gbs = 0;
  std::vector<std::string> rule_hints;
  std::optional<Elite> parent;  // none: a kernel that needs no parent (a library template)
  std::vector<Elite> inspirations;
  std::optional<TargetCell> target;
  std::vector<Cell> filled_cells;  // the archive's occupied cells
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

  static ProposalOutcome Ok(Proposal p) { return {ProposalVerdict::kOk, "", std::move(p)}; }
  static ProposalOutcome NothingNew(std::string why) {
    return {ProposalVerdict::kNothingNew, std::move(why), std::nullopt};
  }
  static ProposalOutcome BadReply(std::string why) {
    return {ProposalVerdict::kBadReply, std::move(why), std::nullopt};
  }
};

}  // namespace kf
