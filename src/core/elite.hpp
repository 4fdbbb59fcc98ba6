#pragma once
// The archive's value types: a behaviour cell (one level index per dimension of the behaviour
// space) and an elite, the best correct candidate found for a cell with the evidence for it.
// Proposers read elites (a parent, inspirations) without depending on the search.

#include <string>
#include <vector>

#include "core/evaluation.hpp"
#include "core/kernel.hpp"

namespace kf {

using Cell = std::vector<int>;

struct Elite {
  Cell cell;
  Kernel kernel;
  Config config;
  double speedup = 0;
  double time_ms = 0;
  std::string kernel_id, origin;       // origin: "template rope_vec8.cl", "unroll of k1234…"
  std::vector<std::string> mutations;  // applied along its lineage, oldest first
  std::string device;                  // the device that judged it ("cuda:1 (NVIDIA H200)")
  Evaluation evaluation;               // the verdict that made it the elite
};

}  // namespace kf
