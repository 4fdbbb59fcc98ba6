#pragma once
// The JSON shapes of the command-line contract (DESIGN.md "The command line").

#include <nlohmann/json.hpp>
#include <vector>

#include "backend/device.hpp"
#include "core/evaluation_json.hpp"
#include "core/task.hpp"

namespace kf {

nlohmann::json DeviceJson(const DeviceInfo& d);
nlohmann::json TaskJson(const Task& t);

}  // namespace kf
