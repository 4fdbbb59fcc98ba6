#include "eval/precheck.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/input_error.hpp"
#include "eval/workspace.hpp"

namespace kf {

Env ConstraintEnv(const DeviceInfo& device, const Sizes& sizes, const Config& config) {
  Env env = SizesEnv(sizes);
  BindConfig(config, env);
  env.Set("max_work_group_size", static_cast<double>(device.max_work_group_size));
  env.Set("local_mem_bytes", static_cast<double>(device.local_mem_bytes));
  env.Set("sub_group_width", device.sub_group_width);
  env.Set("simd_width", device.sub_group_width);
  env.Set("compute_units", device.compute_units);
  return env;
}

std::vector<std::string> ConstraintExtras() {
  const Env env = ConstraintEnv(DeviceInfo{}, {}, {});
  std::vector<std::string> names;
  for (const auto& [name, value] : env.entries()) names.push_back(name);
  return names;
}

std::vector<std::string> TaskSizeNames(const Task& task) {
  std::vector<std::string> names = task.size_names;
  for (const auto* sets : {&task.check_sizes, &task.bench_sizes}) {
    for (const SizeSet& set : *sets) {
      for (const auto& [name, value] : set.sizes) {
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
      }
    }
  }
  return names;
}

void CheckKernelAgainstTask(const Task& task, const Kernel& kernel) {
  std::vector<std::string> args;
  for (const ArgSpec& a : task.args) args.push_back(a.name);
  CheckEntryArgs(kernel, args, fmt::format("task '{}'", task.name));
  CheckKernelNames(kernel, TaskSizeNames(task), ConstraintExtras());
}

std::optional<Evaluation> Precheck(const Task& task, const Kernel& kernel, const Config& config,
                                   const DeviceInfo& device, const SizeSet& bench,
                                   int64_t* group_size) {
  Evaluation ev;
  ev.device = device.Label();
  ev.config = config;
  ev.bench_sizes = bench.name;
  auto fail = [&](Status s, std::string reason) {
    ev.status = s;
    ev.reason = std::move(reason);
    return std::optional<Evaluation>(ev);
  };
  try {
    CheckKernelAgainstTask(task, kernel);
  } catch (const InputError& e) {
    return fail(Status::kCompileError, e.what());
  }
  Env env = ConstraintEnv(device, bench.sizes, config);
  for (const Expr& c : kernel.constraints) {
    try {
      if (!c.EvalBool(env)) return fail(Status::kInvalidConfig, "constraint violated: " + c.text());
    } catch (const ExprError& e) {
      return fail(Status::kInvalidConfig,
                  std::string("constraint cannot be evaluated: ") + e.what());
    }
  }
  try {
    const Env sizes = SizesEnv(bench.sizes);
    int64_t largest = 1;
    for (const LaunchRule& rule : kernel.launches) {
      Launch l = MakeLaunch(rule, config, sizes);
      const std::string which =
          kernel.launches.size() > 1 ? fmt::format(" (entry point {})", rule.entry) : "";
      int64_t threads = 1;
      for (int64_t b : l.block) threads *= b;
      largest = std::max(largest, threads);
      if (threads > device.max_work_group_size) {
        ev.hints.push_back(fmt::format("work-group size {} over the device limit {}", threads,
                                       device.max_work_group_size));
        return fail(Status::kInvalidConfig,
                    fmt::format("block of {} work-items{} exceeds the device's maximum of {}",
                                threads, which, device.max_work_group_size));
      }
      if (l.shared_bytes > device.local_mem_bytes) {
        ev.hints.push_back(
            fmt::format("shared/local memory over the device limit ({} bytes per group on {})",
                        device.local_mem_bytes, device.name));
        return fail(Status::kInvalidConfig,
                    fmt::format("@shared{} asks for {} bytes of dynamic shared memory per block; "
                                "the device allows at most {}",
                                which, l.shared_bytes, device.local_mem_bytes));
      }
    }
    if (group_size) *group_size = largest;
    (void)ScratchCounts(kernel, config, sizes);
  } catch (const ExprError& e) {
    return fail(Status::kInvalidConfig, std::string("launch rule: ") + e.what());
  }
  return std::nullopt;
}

}  // namespace kf
