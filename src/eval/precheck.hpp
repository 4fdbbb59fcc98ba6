#pragma once
// What can be decided about a candidate before anything is compiled: the entry point takes the
// task's arguments, the configuration satisfies its constraints (over parameters, device
// properties and the benchmark sizes), the launch rule gives positive extents, and the group
// fits the device. A failure is a verdict (`compile_error` for a wrong signature, else
// `invalid_config`); the judge checks this before building, the evaluator again before running.

#include <optional>

#include "core/device_info.hpp"
#include "core/evaluation.hpp"
#include "core/task.hpp"

namespace kf {

// The names constraints see: the sizes, the configuration and the device's properties.
Env ConstraintEnv(const DeviceInfo& device, const Sizes& sizes, const Config& config);

// The failing verdict, or nullopt when the candidate may be compiled. `group_size` (if given) is
// set to the work-items per group at the benchmark sizes.
std::optional<Evaluation> Precheck(const Task& task, const Kernel& kernel, const Config& config,
                                   const DeviceInfo& device, const SizeSet& bench,
                                   int64_t* group_size = nullptr);

}  // namespace kf
