#pragma once
// Turns common compiler and launch failures into one-line hints a kernel engineer can act on.

#include <string>
#include <vector>

#include "backend/device.hpp"

namespace kf {

std::vector<std::string> CompileHints(const std::string& log, const DeviceInfo& device);
std::vector<std::string> LaunchHints(const std::string& error, const Launch& launch,
                                     const DeviceInfo& device);

}  // namespace kf
