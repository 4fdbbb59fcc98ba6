#pragma once
// What a device is, as a value: backend, identity, versions and the properties that constraints,
// rules and prompts read. Produced by a backend when it enumerates devices; crosses stages (the
// executor's ready message, the builder's target, a proposal request) through its JSON codec.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/kernel.hpp"

namespace kf {

enum class DeviceClass { kGpu, kCpu, kOther };
std::string_view DeviceClassName(DeviceClass c);
DeviceClass DeviceClassFromName(std::string_view name);

struct DeviceInfo {
  std::string backend;  // "cuda" | "opencl"
  int index = 0;        // within the backend
  std::string name, vendor, driver_version, compiler_version;
  std::string arch;  // "sm_90" for CUDA; the OpenCL C version for OpenCL
  DeviceClass device_class = DeviceClass::kOther;
  int compute_units = 0;
  int64_t max_work_group_size = 0;
  int64_t local_mem_bytes = 0;
  int sub_group_width = 1;
  int64_t global_mem_bytes = 0;
  int64_t cache_bytes = 0;          // last-level cache the timer flushes (L2 on GPUs)
  double spec_bandwidth_gbs = 0.0;  // from clocks and bus width where the driver says; 0 unknown

  std::string Selector() const { return backend + ":" + std::to_string(index); }
  // "cuda:0 (NVIDIA H200)": how evaluations name the device that judged them.
  std::string Label() const { return Selector() + " (" + name + ")"; }
  Language language() const { return backend == "cuda" ? Language::kCuda : Language::kOpenCL; }
  // Whether the first launch at a group size may compile the kernel: PoCL's CPU devices build a
  // work-group function for each group size when a launch of it first runs (seen with PoCL 3.1:
  // clEnqueueNDRangeKernel returns at once, the wait takes the compile).
  bool CompilesAtFirstLaunch() const {
    return backend == "opencl" && device_class == DeviceClass::kCpu;
  }
};

}  // namespace kf
