#include "backend/device.hpp"

#include <fmt/format.h>

namespace kf {

std::string StepPrefix(size_t step, size_t steps) {
  return steps > 1 ? fmt::format("launch {} of {}: ", step + 1, steps) : "";
}

DeviceStatus RoundTripProbe(Device& device, BufferHandle* probe) {
  static uint32_t round = 0;
  const uint32_t pattern = 0x12345678u ^ ++round;  // a fresh value: a stale read cannot pass
  if (!*probe) {
    if (DeviceStatus s = device.Alloc(64, probe); !s.ok()) return s;
  }
  DeviceStatus s = device.Fill(*probe, pattern, 64);
  uint32_t back = 0;
  if (s.ok()) s = device.Read(*probe, &back, 4);
  if (s.ok() && back != pattern) s = DeviceStatus::Fail("health check read back the wrong value");
  return s;
}

}  // namespace kf
