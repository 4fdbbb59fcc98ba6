#pragma once
// What tuning needs to know of a device an executor opened: its properties and the benchmark
// sizes as constraint variables, and the rule engine's context (op class, vendor, architecture).

#include <string>

#include "core/device_info.hpp"
#include "core/task.hpp"
#include "tune/rules.hpp"

namespace kf {

struct DeviceContext {
  Env env;              // max_work_group_size, local_mem_bytes, sub_group_width, ..., sizes
  RuleContext context;  // with env as its device properties; no kernel yet
  Language language = Language::kOpenCL;
};

DeviceContext MakeDeviceContext(const DeviceInfo& device, const Task& task,
                                const std::string& sizes);

}  // namespace kf
