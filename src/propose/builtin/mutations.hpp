#pragma once
// Source mutations that apply to any kernel: each rewrites the source text (and its @param lines)
// into a new template, or says it does not apply. They are not proofs: a mutation that breaks the
// kernel is fine, the evaluator judges it.
//
//   unroll          `#pragma unroll` before the first loop that has none
//   launch_bounds   CUDA `__launch_bounds__(BLOCK)`; OpenCL `reqd_work_group_size(BLOCK, 1, 1)`
//                   (1-D groups whose size is one parameter)
//   restrict        `restrict` / `__restrict__` on the entry's pointer parameters that lack it
//   const           `const` on the pointers the task reads only
//   vector_width    a parameter named like a vector width (VEC, WIDTH, VW) gets twice its widest
//   work_per_thread a parameter named like work per thread (HPT, ITEMS, WPT, PER_THREAD, TILE)
//                   gets twice its largest value
//   block_size      the block-size parameter gets a larger and a smaller power of two

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/kernel.hpp"
#include "core/task.hpp"

namespace kf {

struct Mutation {
  std::string name;
  // The mutated source, or nullopt when the mutation does not apply to `kernel`.
  std::optional<std::string> (*apply)(const Kernel& kernel, const Task& task);
};

const std::vector<Mutation>& Mutations();
const Mutation* MutationByName(const std::string& name);

}  // namespace kf
