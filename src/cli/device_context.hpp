#pragma once
// What tuning needs to know of the device an executor opened: its properties and the benchmark
// sizes as constraint variables, and the rule engine's context (op class, vendor, architecture).

#include <nlohmann/json.hpp>
#include <string>

#include "core/task.hpp"
#include "tune/rules.hpp"

namespace kf {

struct DeviceContext {
  Env env;              // max_work_group_size, local_mem_bytes, sub_group_width, ..., sizes
  RuleContext context;  // with env as its device properties; no kernel yet
  Language language = Language::kOpenCL;
};

// `info` is the executor's ready message (Supervisor::executor_info()).
DeviceContext MakeDeviceContext(const nlohmann::json& info, const Task& task,
                                const std::string& sizes);

}  // namespace kf
