#pragma once
// Proposers: where new kernels come from. A proposer gets a proposal request (core/proposal.hpp:
// the task, the device, rule hints, a parent elite with its evaluation, inspirations, a target
// cell) and returns one new kernel, usually a template, with its provenance; or nothing new; or
// a bad reply with the reason. The search asks several at once, from several threads: Propose
// must be safe to call concurrently. Implementations: builtin/ (the task's templates and source
// mutations, offline), command/ (any executable speaking JSON), llm/ (a chat-completions model).

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

  // Whether a request without a parent gets a kernel written from the task alone (a model, a
  // command): a search with no baseline kernel asks so until a first kernel is correct.
  virtual bool WritesFromScratch() const { return false; }

  // A proposal of this run as the store holds it, in index order, when a run resumes: the
  // proposer's own state (what it has proposed, what it has spent) follows them.
  virtual void Observe(const ProposalRecord& record) { (void)record; }

  // A proposal of this proposer has reached a final state, with its grade (record.grade()):
  // credit for the choices that made it. Called on the search's thread as proposals finish, and
  // for a resumed run once for each finished proposal in the store, in the order they finished.
  virtual void Credit(const ProposalRecord& record) { (void)record; }

  // Non-empty when the proposer can give nothing more (its cost limit is spent): the search asks
  // no more and stops with this reason.
  virtual std::string Exhausted() const { return ""; }
};

}  // namespace kf
