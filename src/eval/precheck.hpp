#pragma once
// What can be decided about a candidate before anything is compiled: the entry point takes the
// task's arguments, its launch rule and constraints read only names they can see, the
// configuration satisfies its constraints (over parameters, device properties and the benchmark
// sizes), the launch rule gives positive extents, and the group and its dynamic shared memory fit
// the device. A failure is a verdict (`compile_error` for a wrong signature or an unknown name,
// else `invalid_config`); the judge checks this before building, the evaluator again before
// running.

#include <optional>
#include <string>
#include <vector>

#include "core/device_info.hpp"
#include "core/evaluation.hpp"
#include "core/task.hpp"

namespace kf {

// The names constraints see: the sizes, the configuration and the device's properties.
Env ConstraintEnv(const DeviceInfo& device, const Sizes& sizes, const Config& config);

// The names a constraint sees beyond the sizes and the parameters (the device's properties).
std::vector<std::string> ConstraintExtras();

// The names a task's size sets bind (its sizes, and any other value a set gives).
std::vector<std::string> TaskSizeNames(const Task& task);

// The kernel's entry point takes the task's arguments, and its launch rule and constraints read
// only the task's sizes, the kernel's parameters and (constraints) the device's properties.
// Throws InputError naming the kernel file's line.
void CheckKernelAgainstTask(const Task& task, const Kernel& kernel);

// The failing verdict, or nullopt when the candidate may be compiled. `group_size` (if given) is
// set to the work-items per group at the benchmark sizes.
std::optional<Evaluation> Precheck(const Task& task, const Kernel& kernel, const Config& config,
                                   const DeviceInfo& device, const SizeSet& bench,
                                   int64_t* group_size = nullptr);

}  // namespace kf
