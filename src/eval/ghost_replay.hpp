#pragma once
// The ghost replay's kernel: a no-op with a task's signature. Launched where a candidate would be,
// on outputs poisoned as a candidate's are, it must fail the checks; if it passes, the answer
// reached the candidate's buffers by the harness's doing, and the evaluator stops with an error
// (a harness bug, not a candidate's verdict).

#include <string>

#include "core/kernel.hpp"
#include "core/task.hpp"

namespace kf {

constexpr const char* kGhostEntry = "kf_ghost";

// The no-op kernel's source in `language`: every buffer argument as a plain pointer, every scalar
// with its type, in the task's order.
std::string GhostKernelSource(const Task& task, Language language);

}  // namespace kf
