#pragma once
// Proposers: where new kernels come from. A proposer gets a proposal request (core/proposal.hpp:
// the task, the device, rule hints, a parent elite with its evaluation, inspirations, a target
// cell) and returns one new kernel, usually a template, with its provenance; or nothing new; or
// a bad reply with the reason. The search asks several at once, from several threads: Propose
// must be safe to call concurrently. Implementations: builtin/ (the task's templates and source
// mutations, offline), command/ (any executable speaking JSON), and an LLM later.

#include <string>

#include "core/proposal.hpp"

namespace kf {

class Proposer {
 public:
  virtual ~Proposer() = default;
  virtual std::string name() const = 0;

  // Called concurrently for different requests. Never throws for a bad reply: that is an outcome.
  virtual ProposalOutcome Propose(const ProposalRequest& request) = 0;

  // Kernels the proposer still has that need no parent (a template library): the search sends
  // this many requests without a parent before it selects parents.
  virtual int UnparentedLeft() const { return 0; }

  // A proposal of this run, made by this proposer: the ones in the store when a run resumes, in
  // the order they were made. The proposer's own state (what it has proposed) follows them.
  virtual void Observe(const Proposal& proposal) { (void)proposal; }
};

}  // namespace kf
