#pragma once
// The built-in proposer: first every template the task ships for the device's language, in the
// task's order; then source mutations of parents chosen by the search. Of the mutations that
// apply to the parent and give a source not proposed before, it picks, in this order of chances:
// half the time one whose child the classifier places in a cell the archive has not filled yet
// (MAP-Elites wants coverage: a new cell is a new strategy to improve on); else, half the time,
// one that an inspiration's lineage used and the parent's did not (a move that helped in another
// cell, tried here too); else any, uniformly. A mutated template starts from its parent's best
// configuration: the parent's values become its defaults.

#include <set>

#include "propose/proposer.hpp"
#include "search/classifier.hpp"

namespace kf {

class BuiltinProposer : public Proposer {
 public:
  // `descriptors` predicts the cell of a mutated kernel from its source.
  explicit BuiltinProposer(DescriptorSpace descriptors) : descriptors_(std::move(descriptors)) {}
  std::optional<Proposal> Propose(const ProposalContext& context, std::mt19937_64& rng) override;
  bool HasUnparented() const override { return !templates_done_; }

 private:
  size_t next_template_ = 0;
  bool templates_done_ = false;
  DescriptorSpace descriptors_;
  std::set<std::string> proposed_;  // kernel ids
};

}  // namespace kf
