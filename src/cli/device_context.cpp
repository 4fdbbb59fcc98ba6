#include "cli/device_context.hpp"

namespace kf {

DeviceContext MakeDeviceContext(const nlohmann::json& info, const Task& task,
                                const std::string& sizes) {
  DeviceContext d;
  d.language = info.value("backend", "") == "cuda" ? Language::kCuda : Language::kOpenCL;
  for (const char* key :
       {"max_work_group_size", "local_mem_bytes", "sub_group_width", "compute_units"}) {
    if (info.contains(key)) d.env.Set(key, info[key].get<double>());
  }
  d.env.Set("simd_width", info.value("sub_group_width", 1.0));
  const SizeSet& bench = task.BenchSizes(sizes, info.value("class", ""));
  for (const auto& [k, v] : bench.sizes) d.env.Set(k, static_cast<double>(v));
  d.context.op_class = task.op_class;
  d.context.vendor = info.value("vendor", "");
  d.context.arch = info.value("arch", "");
  d.context.device_class = info.value("class", "");
  d.context.device_name = info.value("name", "");
  d.context.device = d.env;
  return d;
}

}  // namespace kf
