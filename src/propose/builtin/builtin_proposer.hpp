#pragma once
// The built-in proposer: first every template the task ships for the device's language, in the
// task's order (requests without a parent); then source mutations of the request's parent. Of
// the mutations that apply to the parent and give a source not proposed before, it picks, in this
// order of chances: half the time one whose child the classifier places in a cell the archive has
// not filled yet (MAP-Elites wants coverage: a new cell is a new strategy to improve on); else,
// half the time, one that an inspiration's lineage used and the parent's did not (a move that
// helped in another cell, tried here too); else the one a bandit over the mutations chooses
// (Thompson sampling on the graded credit of the proposals each mutation made: the same credit
// the LLM proposer's prompt components earn). A mutated template starts from
// its parent's best configuration: the parent's values become its defaults. Random choices come
// from the request's own seed, so a proposal does not depend on what was proposed beside it.

#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/task.hpp"
#include "prompt/bandit.hpp"
#include "propose/proposer.hpp"

namespace kf {

class BuiltinProposer : public Proposer {
 public:
  // Where the classifier would place a kernel, read from its source (the search's classifier).
  using CellPredictor = std::function<Cell(const Kernel&)>;

  BuiltinProposer(const Task& task, Language language, CellPredictor predict);
  std::string name() const override { return "builtin"; }
  ProposalOutcome Propose(const ProposalRequest& request) override;
  int UnparentedLeft() const override;
  void Observe(const ProposalRecord& record) override;
  void Credit(const ProposalRecord& record) override;

 private:
  ProposalOutcome NextTemplate();
  ProposalOutcome Mutate(const ProposalRequest& request);

  const Task& task_;
  CellPredictor predict_;
  std::vector<std::string> templates_;  // the task's, for the language
  mutable std::mutex mutex_;
  std::set<std::string> used_templates_;
  std::set<std::string> proposed_;  // kernel ids
  Bandit mutations_;                // which mutation's children earned credit
};

}  // namespace kf
