#include "cli/device_context.hpp"

namespace kf {

DeviceContext MakeDeviceContext(const DeviceInfo& device, const Task& task,
                                const std::string& sizes) {
  DeviceContext d;
  d.language = device.language();
  d.env.Set("max_work_group_size", static_cast<double>(device.max_work_group_size));
  d.env.Set("local_mem_bytes", static_cast<double>(device.local_mem_bytes));
  d.env.Set("sub_group_width", device.sub_group_width);
  d.env.Set("compute_units", device.compute_units);
  d.env.Set("simd_width", device.sub_group_width);
  std::string device_class(DeviceClassName(device.device_class));
  const SizeSet& bench = task.BenchSizes(sizes, device_class);
  for (const auto& [k, v] : bench.sizes) d.env.Set(k, static_cast<double>(v));
  d.context.op_class = task.op_class;
  d.context.vendor = device.vendor;
  d.context.arch = device.arch;
  d.context.device_class = device_class;
  d.context.device_name = device.name;
  d.context.device = d.env;
  return d;
}

}  // namespace kf
