#pragma once
// Proposers: where new kernels come from. A proposer gets the search's context (the task, the
// device's language, a parent elite and inspirations from other cells) and returns one new kernel,
// usually a template, with its provenance. The built-in proposer (builtin/) works offline; an LLM
// and an external command are the others DESIGN.md names.

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/kernel.hpp"
#include "core/task.hpp"
#include "search/archive.hpp"

namespace kf {

struct Proposal {
  Kernel kernel;
  std::string origin;            // "template rope_vec8.cl", "unroll of rope_vec8.cl"
  std::string parent_kernel_id;  // "" for a kernel from the library
  std::optional<Cell> parent_cell;
  std::vector<std::string> mutations;  // the lineage's mutations, oldest first
};

struct ProposalContext {
  const Task& task;
  Language language;
  const Elite* parent = nullptr;  // nullptr before the archive holds anything
  std::vector<const Elite*> inspirations;
  const Archive* archive = nullptr;  // which cells are filled, and how well
};

class Proposer {
 public:
  virtual ~Proposer() = default;
  // One new kernel, or nullopt when this context gives nothing new (the search then tries another
  // parent, and stops after enough empty tries).
  virtual std::optional<Proposal> Propose(const ProposalContext& context, std::mt19937_64& rng) = 0;
  // True while the proposer still has kernels that need no parent (the template library).
  virtual bool HasUnparented() const { return false; }
};

}  // namespace kf
