#include "eval/compute_peak.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/evaluation.hpp"

namespace kf {

namespace {

constexpr int kChains = 8;  // independent accumulators per work-item: hides the FMA latency

// Each work-item runs kChains independent FMA chains of float8 `iters` times (16 * kChains FLOPs
// an iteration): explicit vectors, since a CPU device's compiler may not vectorize across
// work-items, and a good kernel's does.
constexpr const char* kFmaOpenCL = R"(
__kernel void kf_peak_fma(__global float* out, int iters, float a, float b) {
  float8 x0 = (float8)(get_global_id(0) * 1e-9f), x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3,
         x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6, x7 = x0 + 7;
  float8 va = (float8)(a), vb = (float8)(b);
  for (int i = 0; i < iters; ++i) {
    x0 = fma(x0, va, vb); x1 = fma(x1, va, vb); x2 = fma(x2, va, vb); x3 = fma(x3, va, vb);
    x4 = fma(x4, va, vb); x5 = fma(x5, va, vb); x6 = fma(x6, va, vb); x7 = fma(x7, va, vb);
  }
  float8 s = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
  out[get_global_id(0)] = s.s0 + s.s1 + s.s2 + s.s3 + s.s4 + s.s5 + s.s6 + s.s7;
}
)";

constexpr const char* kHalfOpenCL = R"(
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__kernel void kf_peak_fma(__global float* out, int iters, float fa, float fb) {
  half2 a = (half2)((half)fa), b = (half2)((half)fb);
  half2 x0 = (half2)((half)(get_global_id(0) & 7)), x1 = x0 + (half)1, x2 = x0 + (half)2,
        x3 = x0 + (half)3, x4 = x0 + (half)4, x5 = x0 + (half)5, x6 = x0 + (half)6, x7 = x0 + (half)7;
  for (int i = 0; i < iters; ++i) {
    x0 = fma(x0, a, b); x1 = fma(x1, a, b); x2 = fma(x2, a, b); x3 = fma(x3, a, b);
    x4 = fma(x4, a, b); x5 = fma(x5, a, b); x6 = fma(x6, a, b); x7 = fma(x7, a, b);
  }
  half2 s = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
  out[get_global_id(0)] = (float)s.x + (float)s.y;
}
)";

constexpr const char* kFmaCuda = R"(
extern "C" __global__ void kf_peak_fma(float* out, int iters, float a, float b) {
  int g = blockIdx.x * blockDim.x + threadIdx.x;
  float x0 = g * 1e-9f, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3, x4 = x0 + 4, x5 = x0 + 5,
        x6 = x0 + 6, x7 = x0 + 7;
  for (int i = 0; i < iters; ++i) {
    x0 = fmaf(x0, a, b); x1 = fmaf(x1, a, b); x2 = fmaf(x2, a, b); x3 = fmaf(x3, a, b);
    x4 = fmaf(x4, a, b); x5 = fmaf(x5, a, b); x6 = fmaf(x6, a, b); x7 = fmaf(x7, a, b);
  }
  out[g] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}
)";

// Tensor-core MMAs through mma.sync: each warp runs kChains independent accumulator tiles
// `iters` times. m16n8k16 (fp16, bf16): 4096 FLOPs per MMA; m16n8k8 (tf32): 2048. Every shape
// takes A in four registers and B in two.
std::string MmaCuda(const char* shape, const char* type) {
  return fmt::format(R"(
extern "C" __global__ void kf_peak_fma(float* out, int iters, float fa, float fb) {{
  unsigned a[4], b[2];
  for (int r = 0; r < 4; ++r) a[r] = __float_as_uint(fa) ^ (threadIdx.x + r);
  for (int r = 0; r < 2; ++r) b[r] = __float_as_uint(fb) ^ (threadIdx.x * 3 + r);
  float c[{2}][4] = {{}};
  for (int i = 0; i < iters; ++i) {{
#pragma unroll
    for (int t = 0; t < {2}; ++t) {{
      asm volatile("mma.sync.aligned.{0}.row.col.f32.{1}.{1}.f32 {{%0, %1, %2, %3}}, "
                   "{{%4, %5, %6, %7}}, {{%8, %9}}, {{%0, %1, %2, %3}};"
                   : "+f"(c[t][0]), "+f"(c[t][1]), "+f"(c[t][2]), "+f"(c[t][3])
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }}
  }}
  float s = 0;
  for (int t = 0; t < {2}; ++t) s += c[t][0] + c[t][1] + c[t][2] + c[t][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}}
)",
                     shape, type, kChains);
}

struct Probe {
  std::string name;
  std::string source;
  double flops_per_item_iter;  // FLOPs one work-item (thread) contributes per iteration
};

std::vector<Probe> ProbesFor(const std::string& backend) {
  if (backend == "cuda") {
    return {{"fp32", kFmaCuda, 2.0 * kChains},
            {"fp16", MmaCuda("m16n8k16", "f16"), 4096.0 * kChains / 32},
            {"bf16", MmaCuda("m16n8k16", "bf16"), 4096.0 * kChains / 32},
            {"tf32", MmaCuda("m16n8k8", "tf32"), 2048.0 * kChains / 32}};
  }
  return {{"fp32", kFmaOpenCL, 16.0 * kChains}, {"fp16", kHalfOpenCL, 4.0 * kChains}};
}

// GFLOP/s of one probe: the best of a few launches, grown until one takes a few milliseconds.
double MeasureProbe(Device& device, const CompileCache& cache, const Probe& probe) {
  const DeviceInfo& info = device.info();
  CompileResult compiled = CompileCached(device, cache, {probe.source, {"kf_peak_fma"}, {}});
  if (!compiled.ok) return 0;  // the class is absent (no cl_khr_fp16, no tensor cores)
  std::string error;
  auto kernel = device.Load(compiled.artifact, compiled.artifact.symbols.front(), &error);
  if (!kernel) return 0;
  const int64_t block = std::min<int64_t>(128, std::max<int64_t>(1, info.max_work_group_size));
  const int64_t groups =
      int64_t{std::max(1, info.compute_units)} * (info.backend == "cuda" ? 8 : 4);
  const int64_t items = groups * block;
  BufferHandle out = 0;
  if (!device.Alloc(static_cast<size_t>(items) * 4, &out).ok()) return 0;
  DeviceBuffer out_buf(&device, out, static_cast<size_t>(items) * 4);
  std::vector<KernelArg> args(4);
  args[0] = {KernelArg::Kind::kBuffer, out};
  args[1].kind = KernelArg::Kind::kI32;
  args[2].kind = args[3].kind = KernelArg::Kind::kF32;
  args[2].f32 = 0.999999f;
  args[3].f32 = 1e-7f;
  double best = 0;
  for (int iters = 256, runs = 0; runs < 12 && iters < (1 << 24);) {
    args[1].i32 = iters;
    LaunchResult r = device.Run(OneStep(*kernel, Launch{{groups}, {block}}), args);
    if (!r.status.ok()) return 0;
    if (r.elapsed_ms < 5) {  // too short to time: more iterations
      iters *= 4;
      continue;
    }
    ++runs;
    best = std::max(best, probe.flops_per_item_iter * iters * items / (r.elapsed_ms * 1e-3) / 1e9);
  }
  return best;
}

std::string CacheFile(const CompileCache& cache, const DeviceInfo& d) {
  std::string id =
      fmt::format("peak-v2|{}|{}|{}|{}", d.backend, d.vendor, d.name, d.driver_version);
  return fmt::format("{}/compute-{:016x}.json", cache.dir(), XXH3_64bits(id.data(), id.size()));
}

}  // namespace

std::vector<std::pair<std::string, std::string>> PeakKernelSources(const std::string& backend) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Probe& p : ProbesFor(backend)) out.emplace_back(p.name, p.source);
  return out;
}

PeakCompute ResolvePeakCompute(Device& device, const CompileCache& cache) {
  const DeviceInfo& info = device.info();
  if (const char* env = std::getenv("KF_PEAK_GFLOPS"); env && *env)
    return {{{"fp32", std::atof(env)}}, "env"};
  const std::string file = CacheFile(cache, info);
  const char* remeasure = std::getenv("KF_REMEASURE_BANDWIDTH");  // one switch for both peaks
  const std::string token = remeasure ? remeasure : "";
  if (!cache.dir().empty() && std::filesystem::exists(file)) {
    std::ifstream in(file);
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_object() && j.contains("gflops") && j["gflops"].is_object() &&
        (token.empty() || j.value("token", "") == token)) {
      PeakCompute cached{{}, "cached"};
      for (const auto& [name, g] : j["gflops"].items())
        if (g.is_number()) cached.gflops[name] = g.get<double>();
      if (cached.Max() > 0) return cached;
    }
  }
  PeakCompute peak{{}, "measured"};
  for (const Probe& probe : ProbesFor(info.backend)) {
    double g = MeasureProbe(device, cache, probe);
    if (g > 0) peak.gflops[probe.name] = g;
  }
  if (peak.Max() <= 0) return {{}, "unmeasured"};
  if (!cache.dir().empty()) {
    const std::string tmp = file + ".tmp";
    std::ofstream(tmp) << nlohmann::json{
        {"gflops", peak.gflops},
        {"device", info.name},
        {"token", token}}.dump();
    std::error_code ec;
    std::filesystem::rename(tmp, file, ec);
  }
  return peak;
}

}  // namespace kf
