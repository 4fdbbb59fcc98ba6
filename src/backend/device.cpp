#include "backend/device.hpp"

namespace kf {

DeviceStatus RoundTripProbe(Device& device) {
  constexpr uint32_t kPattern = 0x12345678u;
  BufferHandle probe = 0;
  if (DeviceStatus s = device.Alloc(64, &probe); !s.ok()) return s;
  DeviceStatus s = device.Fill(probe, kPattern, 64);
  uint32_t back = 0;
  if (s.ok()) s = device.Read(probe, &back, 4);
  device.Free(probe);
  if (s.ok() && back != kPattern) s = DeviceStatus::Fail("health check read back the wrong value");
  return s;
}

}  // namespace kf
