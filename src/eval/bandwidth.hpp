#pragma once
// The peak memory bandwidth used for roofline figures and the plausibility floor. Resolution
// order: $KF_PEAK_BANDWIDTH_GBS; a `peak_bandwidth_gbs` for the device's name in
// $KF_CONFIG (default ~/.config/kfoundry/devices.toml, tables keyed by device name); a cached
// measurement in the cache folder (one per device: backend, vendor, name and driver); else
// measured now by a copy kernel (bytes read + written) and cached for next time. With
// $KF_REMEASURE_BANDWIDTH set (the command line's --remeasure-bandwidth sets it to a token of its
// own), a figure cached under another token is measured again.

#include <string>

#include "backend/device.hpp"
#include "eval/compile_cache.hpp"

namespace kf {

struct PeakBandwidth {
  double gbs = 0;      // 0: unknown
  std::string source;  // "measured", "cached", "config", "env"
};

PeakBandwidth ResolvePeakBandwidth(Device& device, const CompileCache& cache);
// Measures a device-to-device copy of `bytes`, returning GB/s counting reads and writes.
double MeasureCopyBandwidth(Device& device, const CompileCache& cache, size_t bytes,
                            std::string* error);

}  // namespace kf
