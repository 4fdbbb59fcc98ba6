#pragma once
// The backends compiled into this binary, and device selection by `--device`:
// `cuda`, `opencl`, `cuda:0`, `opencl:1`, `opencl:NAME-SUBSTRING` or `NAME-SUBSTRING`.
// The default is the first CUDA device if there is one, else the first OpenCL device.

#include <memory>
#include <string>
#include <vector>

#include "backend/device.hpp"

namespace kf {

std::vector<std::unique_ptr<Backend>> MakeBackends();

struct DeviceListing {
  std::vector<DeviceInfo> devices;
  std::vector<std::string> notes;  // "cuda: libcuda.so.1 not found", ...
};

DeviceListing ListDevices(std::vector<std::unique_ptr<Backend>>& backends);

// Opens the selected device; on failure returns null and sets `error` to a message that lists
// what was found.
std::unique_ptr<Device> OpenDevice(std::vector<std::unique_ptr<Backend>>& backends,
                                   const std::string& selector, std::string* error);

}  // namespace kf
