#pragma once
// The backends compiled into this binary, and device selection by `--device`:
// `cuda`, `opencl`, `cuda:0`, `opencl:1`, `opencl:NAME-SUBSTRING` or `NAME-SUBSTRING`.
// The default is the first CUDA device if there is one, else the first OpenCL device. Several:
// `cuda:0,cuda:1`, `cuda:all`.

#include <memory>
#include <optional>
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

// --device's comma-separated parts ("" gives one empty part: the default device).
std::vector<std::string> SplitSelectors(const std::string& spec);
// Whether `selector` (one of --device's comma-separated parts) picks `device`.
bool SelectorMatches(const DeviceInfo& device, const std::string& selector);
// The first listed device `selector` picks, or nothing with `error` listing what was found.
std::optional<DeviceInfo> SelectDevice(const DeviceListing& listing, const std::string& selector,
                                       std::string* error);

// Opens the selected device; on failure returns null and sets `error` to a message that lists
// what was found.
std::unique_ptr<Device> OpenDevice(std::vector<std::unique_ptr<Backend>>& backends,
                                   const std::string& selector, std::string* error);

// A compiler for `target` that needs no opened device (a builder process's), or null and why.
std::unique_ptr<Compiler> MakeOfflineCompiler(std::vector<std::unique_ptr<Backend>>& backends,
                                              const DeviceInfo& target, std::string* why_not);

// `--device` for several devices: comma-separated selectors, `BACKEND:all` expanded to every
// device of that backend (the only case that enumerates). Empty on error, with `error` set (a
// device named twice is an error: two candidates would be timed on it at once).
std::vector<std::string> ExpandDeviceSelectors(std::vector<std::unique_ptr<Backend>>& backends,
                                               const std::string& spec, std::string* error);

}  // namespace kf
