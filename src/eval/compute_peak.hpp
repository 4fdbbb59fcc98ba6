#pragma once
// The device's peak arithmetic rate per precision class, for the compute floor of plausibility and
// the roofline's compute ceiling: measured once per device (like the copy bandwidth) by kernels of
// independent FMA chains (fp32; fp16 where OpenCL has cl_khr_fp16) and, on CUDA, of tensor-core
// MMAs (fp16, bf16, TF32), then cached. $KF_PEAK_GFLOPS overrides every class with one figure.

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backend/device.hpp"
#include "eval/compile_cache.hpp"

namespace kf {

struct PeakCompute {
  std::map<std::string, double> gflops;  // by class: "fp32", "fp16", "bf16", "tf32"
  std::string source;                    // "measured", "cached", "env"; "unmeasured: why"
  // The fastest class: a candidate may use any unit the device has (an fp32 GEMM may split its
  // operands over TF32 tensor cores), so the floor is set by the fastest. 0: unknown.
  double Max() const {
    double best = 0;
    for (const auto& [name, g] : gflops) best = std::max(best, g);
    return best;
  }
};

PeakCompute ResolvePeakCompute(Device& device, const CompileCache& cache);

// The measuring kernels' sources for a backend ("cuda" or "opencl"), by class; each has the entry
// point kf_peak_fma(float* out, int iters, float a, float b).
std::vector<std::pair<std::string, std::string>> PeakKernelSources(const std::string& backend);

}  // namespace kf
