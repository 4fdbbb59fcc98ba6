#include "backend/cuda/cuda_device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "backend/cuda/cuda_api.hpp"

namespace kf {

namespace {

using namespace cuda;

int Attr(const DriverApi& a, CUdevice d, int attr) {
  int v = 0;
  return a.cuDeviceGetAttribute(&v, attr, d) == CUDA_SUCCESS ? v : 0;
}

DeviceInfo Describe(const Driver& driver, const Nvrtc* nvrtc, CUdevice d, int index) {
  const DriverApi& a = driver.api();
  DeviceInfo info;
  info.backend = "cuda";
  info.index = index;
  char name[256] = {};
  a.cuDeviceGetName(name, sizeof(name), d);
  info.name = name;
  info.vendor = "NVIDIA";
  info.driver_version =
      fmt::format("{}.{}", driver.version() / 1000, (driver.version() % 1000) / 10);
  info.compiler_version = nvrtc ? "nvrtc " + nvrtc->version() : "nvrtc missing";
  info.arch = fmt::format("sm_{}{}", Attr(a, d, kAttrComputeCapabilityMajor),
                          Attr(a, d, kAttrComputeCapabilityMinor));
  info.device_class = DeviceClass::kGpu;
  info.compute_units = Attr(a, d, kAttrMultiprocessorCount);
  info.max_work_group_size = Attr(a, d, kAttrMaxThreadsPerBlock);
  info.local_mem_bytes = std::max(Attr(a, d, kAttrMaxSharedMemoryPerBlock),
                                  Attr(a, d, kAttrMaxSharedMemoryPerBlockOptin));
  info.sub_group_width = Attr(a, d, kAttrWarpSize);
  size_t total = 0;
  a.cuDeviceTotalMem(&total, d);
  info.global_mem_bytes = static_cast<int64_t>(total);
  info.cache_bytes = Attr(a, d, kAttrL2CacheSize);
  double mem_khz = Attr(a, d, kAttrMemoryClockRate),
         bus_bits = Attr(a, d, kAttrGlobalMemoryBusWidth);
  info.spec_bandwidth_gbs = 2.0 * mem_khz * 1e3 * bus_bits / 8.0 / 1e9;  // double data rate
  return info;
}

// NVRTC to a cubin for `arch` ("sm_90"): the same for an opened device and a builder process.
CompileResult CompileFor(const Nvrtc* nvrtc, const std::string& arch,
                         const CompileRequest& request) {
  CompileResult result;
  if (!nvrtc) {
    result.log = "NVRTC is not available on this machine";
    return result;
  }
  if (arch.rfind("sm_", 0) != 0) {
    result.log = "not a CUDA architecture: '" + arch + "'";
    return result;
  }
  NvrtcOutput out = CompileCuda(*nvrtc, request.source, request.entries, request.defines,
                                std::stoi(arch.substr(3)));
  result.log = out.log;
  result.ok = out.ok;
  result.artifact.binary = std::move(out.cubin);
  result.artifact.symbols = std::move(out.lowered_names);
  result.artifact.listing = std::move(out.ptx);
  return result;
}

class OfflineNvrtc : public Compiler {
 public:
  OfflineNvrtc(std::unique_ptr<Nvrtc> nvrtc, std::string arch)
      : nvrtc_(std::move(nvrtc)), arch_(std::move(arch)) {}
  CompileResult Compile(const CompileRequest& request) override {
    return CompileFor(nvrtc_.get(), arch_, request);
  }

 private:
  std::unique_ptr<Nvrtc> nvrtc_;
  std::string arch_;
};

// Reads n 16-byte words (the flush's second half). The store never happens (the words all hold
// one value, so their XOR is 0); it is there so that the loads are kept.
constexpr const char* kFlushReadSource = R"(
extern "C" __global__ void kf_flush_read(const uint4* __restrict__ p, long long n) {
  unsigned x = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const uint4 v = p[i];
    x ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (x == 0xFFFFFFFFu) *(unsigned*)p = x;
})";

class CudaKernel : public LoadedKernel {
 public:
  CudaKernel(const DriverApi& api, CUmodule m, CUfunction f)
      : api_(api), module_(m), function_(f) {}
  ~CudaKernel() override { api_.cuModuleUnload(module_); }
  KernelResources resources() const override {
    int shared = 0, threads = 0;
    api_.cuFuncGetAttribute(&shared, kFuncSharedSizeBytes, function_);
    api_.cuFuncGetAttribute(&threads, kFuncMaxThreadsPerBlock, function_);
    return {shared, threads};
  }
  CUfunction function() const { return function_; }
  // The most dynamic shared memory a launch may ask for now (the driver's default until raised).
  int64_t dynamic_shared_limit() const {
    if (dynamic_shared_limit_ < 0) {
      int limit = 0;
      api_.cuFuncGetAttribute(&limit, kFuncMaxDynamicSharedSizeBytes, function_);
      dynamic_shared_limit_ = limit;
    }
    return dynamic_shared_limit_;
  }
  void set_dynamic_shared_limit(int64_t bytes) { dynamic_shared_limit_ = bytes; }

 private:
  const DriverApi& api_;
  CUmodule module_;
  CUfunction function_;
  mutable int64_t dynamic_shared_limit_ = -1;  // -1: not read yet
};

class CudaDevice : public Device {
 public:
  CudaDevice(std::shared_ptr<Driver> driver, std::shared_ptr<Nvrtc> nvrtc, CUdevice device,
             CUcontext ctx, DeviceInfo info)
      : driver_(std::move(driver)),
        nvrtc_(std::move(nvrtc)),
        device_(device),
        ctx_(ctx),
        info_(std::move(info)),
        optin_shared_(std::max(Attr(api(), device, kAttrMaxSharedMemoryPerBlock),
                               Attr(api(), device, kAttrMaxSharedMemoryPerBlockOptin))) {}

  ~CudaDevice() override {
    const DriverApi& a = api();
    a.cuCtxSetCurrent(ctx_);
    for (auto& [h, ptr] : buffers_) a.cuMemFree(ptr);
    flush_reader_.reset();
    for (auto& [start, stop] : slots_) {
      a.cuEventDestroy(start);
      a.cuEventDestroy(stop);
    }
    a.cuDevicePrimaryCtxRelease(device_);
  }

  const DeviceInfo& info() const override { return info_; }

  CompileResult Compile(const CompileRequest& request) override {
    return CompileFor(nvrtc_.get(), info_.arch, request);
  }

  std::unique_ptr<LoadedKernel> Load(const Artifact& artifact, const std::string& symbol,
                                     std::string* error) override {
    const DriverApi& a = api();
    a.cuCtxSetCurrent(ctx_);
    CUmodule module = nullptr;
    if (CUresult r = a.cuModuleLoadData(&module, artifact.binary.data()); r != CUDA_SUCCESS) {
      *error = a.Error("cuModuleLoadData", r);
      return nullptr;
    }
    CUfunction fn = nullptr;
    if (CUresult r = a.cuModuleGetFunction(&fn, module, symbol.c_str()); r != CUDA_SUCCESS) {
      *error = a.Error("cuModuleGetFunction", r);
      a.cuModuleUnload(module);
      return nullptr;
    }
    return std::make_unique<CudaKernel>(a, module, fn);
  }

  DeviceStatus Alloc(size_t bytes, BufferHandle* out) override {
    CUdeviceptr ptr = 0;
    if (CUresult r = api().cuMemAlloc(&ptr, std::max<size_t>(bytes, 4)); r != CUDA_SUCCESS) {
      return DeviceStatus::Fail(api().Error("cuMemAlloc", r));
    }
    *out = ++next_handle_;
    buffers_[*out] = ptr;
    return DeviceStatus::Ok();
  }

  void Free(BufferHandle buffer) override {
    if (views_.erase(buffer)) return;
    auto it = buffers_.find(buffer);
    if (it == buffers_.end()) return;
    api().cuMemFree(it->second);
    buffers_.erase(it);
  }

  DeviceStatus Write(BufferHandle buffer, const void* src, size_t bytes) override {
    return Check("cuMemcpyHtoD", api().cuMemcpyHtoD(Ptr(buffer), src, bytes));
  }

  DeviceStatus Read(BufferHandle buffer, void* dst, size_t bytes) override {
    return Check("cuMemcpyDtoH", api().cuMemcpyDtoH(dst, Ptr(buffer), bytes));
  }

  DeviceStatus Fill(BufferHandle buffer, uint32_t pattern, size_t bytes) override {
    DeviceStatus s = Check("cuMemsetD32", api().cuMemsetD32(Ptr(buffer), pattern, bytes / 4));
    return s.ok() ? Check("cuCtxSynchronize", api().cuCtxSynchronize()) : s;
  }

  LaunchResult Run(std::span<const LaunchStep> steps, std::span<const KernelArg> args) override {
    LaunchResult result;
    if (DeviceStatus s = EnqueueTimed(steps, args, 0); !s.ok()) {
      result.status = s;
      return result;
    }
    if (CUresult r = api().cuEventSynchronize(slots_[0].second); r != CUDA_SUCCESS) {
      result.status = DeviceStatus::Fail(api().Error("kernel execution", r));
      return result;
    }
    result.status = ElapsedMs(0, &result.elapsed_ms);
    return result;
  }

  DeviceStatus View(BufferHandle parent, size_t offset, size_t bytes, BufferHandle* out) override {
    auto it = buffers_.find(parent);
    if (it == buffers_.end()) return DeviceStatus::Fail("View: no such buffer");
    (void)bytes;
    *out = ++next_handle_;
    views_[*out] = it->second + offset;
    return DeviceStatus::Ok();
  }

  size_t ViewAlignment() const override { return 256; }

  DeviceStatus Enqueue(LoadedKernel& loaded, std::span<const KernelArg> args,
                       const Launch& launch) override {
    return LaunchAsync(loaded, args, launch, nullptr, nullptr);
  }

  DeviceStatus EnqueueTimed(std::span<const LaunchStep> steps, std::span<const KernelArg> args,
                            int slot) override {
    const DriverApi& a = api();
    while (static_cast<int>(slots_.size()) <= slot) {
      CUevent start = nullptr, stop = nullptr;
      a.cuEventCreate(&start, 0);
      a.cuEventCreate(&stop, 0);
      slots_.emplace_back(start, stop);
    }
    auto [start, stop] = slots_[static_cast<size_t>(slot)];
    for (size_t i = 0; i < steps.size(); ++i) {
      if (DeviceStatus s =
              LaunchAsync(*steps[i].kernel, args, steps[i].launch, i == 0 ? start : nullptr,
                          i + 1 == steps.size() ? stop : nullptr);
          !s.ok())
        return DeviceStatus::Fail(StepPrefix(i, steps.size()) + s.message());
    }
    return DeviceStatus::Ok();
  }

  DeviceStatus ElapsedMs(int slot, double* ms) override {
    if (slot < 0 || slot >= static_cast<int>(slots_.size()))
      return DeviceStatus::Fail("ElapsedMs: no such slot");
    float f = 0;
    auto [start, stop] = slots_[static_cast<size_t>(slot)];
    if (CUresult r = api().cuEventElapsedTime(&f, start, stop); r != CUDA_SUCCESS)
      return DeviceStatus::Fail(api().Error("cuEventElapsedTime", r));
    *ms = f;
    return DeviceStatus::Ok();
  }

  // Evicts the timed kernel's inputs from L2: a write over twice the L2, then a read of the same
  // bytes, so the lines the flush leaves behind are clean. After the write alone up to an L2 of
  // the flush's own dirty lines would be written back during the next launch, charging a kernel
  // of a few hundred MB about 9% more time for traffic it did not make (BENCHMARKS.md,
  // 2026-12-04 "the L2 flush").
  DeviceStatus EnqueueFlushCache() override {
    if (DeviceStatus s = EnsureScratch(); !s.ok()) return s;
    if (DeviceStatus s = Check(
            "cuMemsetD32 (cache flush)",
            api().cuMemsetD32Async(Ptr(scratch_), ++flush_count_, scratch_bytes_ / 4, nullptr));
        !s.ok()) {
      return s;
    }
    const KernelArg args[] = {
        {KernelArg::Kind::kBuffer, scratch_},
        {.kind = KernelArg::Kind::kI64, .i64 = static_cast<int64_t>(scratch_bytes_ / 16)}};
    return Enqueue(*flush_reader_, args,
                   Launch{{static_cast<int64_t>(info_.compute_units) * 8}, {256}});
  }

  DeviceStatus Synchronize() override {
    return Check("cuCtxSynchronize", api().cuCtxSynchronize());
  }

 private:
  DeviceStatus LaunchAsync(LoadedKernel& loaded, std::span<const KernelArg> args,
                           const Launch& launch, CUevent start, CUevent stop) {
    const DriverApi& a = api();
    std::vector<CUdeviceptr> ptrs(args.size());
    std::vector<void*> params(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      const KernelArg& arg = args[i];
      switch (arg.kind) {
        case KernelArg::Kind::kBuffer:
          ptrs[i] = Ptr(arg.buffer);
          params[i] = &ptrs[i];
          break;
        case KernelArg::Kind::kI32: params[i] = const_cast<int32_t*>(&arg.i32); break;
        case KernelArg::Kind::kI64: params[i] = const_cast<int64_t*>(&arg.i64); break;
        case KernelArg::Kind::kF32: params[i] = const_cast<float*>(&arg.f32); break;
        case KernelArg::Kind::kF64: params[i] = const_cast<double*>(&arg.f64); break;
      }
    }
    unsigned g[3] = {1, 1, 1}, b[3] = {1, 1, 1};
    for (size_t d = 0; d < launch.grid.size(); ++d) {
      g[d] = static_cast<unsigned>(launch.grid[d]);
      b[d] = static_cast<unsigned>(launch.block[d]);
    }
    CudaKernel& kernel = static_cast<CudaKernel&>(loaded);
    if (DeviceStatus s = AllowDynamicShared(kernel, launch.shared_bytes); !s.ok()) return s;
    if (start) a.cuEventRecord(start, nullptr);
    CUresult r = a.cuLaunchKernel(kernel.function(), g[0], g[1], g[2], b[0], b[1], b[2],
                                  static_cast<unsigned>(launch.shared_bytes), nullptr,
                                  params.data(), nullptr);
    if (r != CUDA_SUCCESS) return DeviceStatus::Fail(a.Error("cuLaunchKernel", r));
    if (stop) a.cuEventRecord(stop, nullptr);
    return DeviceStatus::Ok();
  }

  // Raises the kernel's dynamic shared memory limit to `bytes` where the launch asks for more than
  // the driver allows by default (48 KB less the static bytes); a request past the device's
  // opt-in limit per block fails with the figures rather than at the launch.
  DeviceStatus AllowDynamicShared(CudaKernel& kernel, int64_t bytes) {
    if (bytes <= 0 || bytes <= kernel.dynamic_shared_limit()) return DeviceStatus::Ok();
    const int64_t static_bytes = kernel.resources().static_local_bytes;
    if (static_bytes + bytes > optin_shared_) {
      return DeviceStatus::Fail(fmt::format(
          "@shared asks for {} bytes of dynamic shared memory per block; with the kernel's {} "
          "bytes of static shared memory that is over the device's limit of {} bytes per block",
          bytes, static_bytes, optin_shared_));
    }
    if (CUresult r = api().cuFuncSetAttribute(kernel.function(), kFuncMaxDynamicSharedSizeBytes,
                                              static_cast<int>(bytes));
        r != CUDA_SUCCESS) {
      return DeviceStatus::Fail(api().Error(
          fmt::format("cuFuncSetAttribute (dynamic shared memory of {} bytes per block)", bytes)
              .c_str(),
          r));
    }
    kernel.set_dynamic_shared_limit(bytes);
    return DeviceStatus::Ok();
  }

  DeviceStatus EnsureScratch() {
    if (flush_reader_) return DeviceStatus::Ok();
    if (!scratch_) {  // kept when the reader failed to build, so a retry allocates no second one
      scratch_bytes_ = static_cast<size_t>(std::max<int64_t>(2 * info_.cache_bytes, 8 << 20));
      scratch_bytes_ = (scratch_bytes_ + 15) / 16 * 16;
      if (DeviceStatus s = Alloc(scratch_bytes_, &scratch_); !s.ok()) return s;
    }
    CompileResult c = Compile({kFlushReadSource, {"kf_flush_read"}, {}});
    if (!c.ok) return DeviceStatus::Fail("cache-flush kernel: " + c.log);
    std::string error;
    flush_reader_ = Load(c.artifact, c.artifact.symbols.front(), &error);
    if (!flush_reader_) return DeviceStatus::Fail("cache-flush kernel: " + error);
    return DeviceStatus::Ok();
  }

 public:
  DeviceStatus HealthCheck() override {
    if (DeviceStatus s = Check("cuCtxSynchronize", api().cuCtxSynchronize()); !s.ok()) return s;
    return RoundTripProbe(*this, &probe_);
  }

  DeviceStatus FlushCache() override {
    DeviceStatus s = EnqueueFlushCache();
    return s.ok() ? Synchronize() : s;
  }

 private:
  const DriverApi& api() const { return driver_->api(); }
  CUdeviceptr Ptr(BufferHandle h) const {
    if (auto it = buffers_.find(h); it != buffers_.end()) return it->second;
    auto v = views_.find(h);
    return v == views_.end() ? 0 : v->second;
  }
  DeviceStatus Check(const char* what, CUresult r) const {
    return r == CUDA_SUCCESS ? DeviceStatus::Ok() : DeviceStatus::Fail(api().Error(what, r));
  }

  std::shared_ptr<Driver> driver_;
  std::shared_ptr<Nvrtc> nvrtc_;
  CUdevice device_;
  CUcontext ctx_;
  DeviceInfo info_;
  int64_t optin_shared_;  // the most shared memory (static and dynamic) a block may have
  std::map<BufferHandle, CUdeviceptr> buffers_;
  std::map<BufferHandle, CUdeviceptr> views_;  // inside a buffer: not freed on their own
  BufferHandle next_handle_ = 0;
  BufferHandle probe_ = 0;                          // the health check's buffer
  std::vector<std::pair<CUevent, CUevent>> slots_;  // start and stop of each timed slot
  BufferHandle scratch_ = 0;  // the cache flush's buffer, twice the L2 (EnsureScratch)
  size_t scratch_bytes_ = 0;
  std::unique_ptr<LoadedKernel> flush_reader_;
  uint32_t flush_count_ = 0;
};

class CudaBackend : public Backend {
 public:
  std::string_view name() const override { return "cuda"; }

  std::vector<DeviceInfo> Enumerate(std::string* why_none) override {
    if (!EnsureLoaded(why_none)) return {};
    int count = 0;
    if (CUresult r = driver_->api().cuDeviceGetCount(&count); r != CUDA_SUCCESS || count == 0) {
      *why_none = r != CUDA_SUCCESS ? driver_->api().Error("cuDeviceGetCount", r)
                                    : "the driver reports no devices";
      return {};
    }
    std::vector<DeviceInfo> out;
    for (int i = 0; i < count; ++i) {
      CUdevice d = 0;
      if (driver_->api().cuDeviceGet(&d, i) == CUDA_SUCCESS)
        out.push_back(Describe(*driver_, nvrtc_.get(), d, i));
    }
    return out;
  }

  std::unique_ptr<Compiler> OfflineCompiler(const DeviceInfo& target,
                                            std::string* why_not) override {
    std::unique_ptr<Nvrtc> nvrtc = Nvrtc::Load(why_not);
    if (!nvrtc) return nullptr;
    return std::make_unique<OfflineNvrtc>(std::move(nvrtc), target.arch);
  }

  std::unique_ptr<Device> Open(int index, std::string* error) override {
    if (!EnsureLoaded(error)) return nullptr;
    const DriverApi& a = driver_->api();
    CUdevice d = 0;
    if (CUresult r = a.cuDeviceGet(&d, index); r != CUDA_SUCCESS) {
      *error = a.Error("cuDeviceGet", r);
      return nullptr;
    }
    CUcontext ctx = nullptr;
    if (CUresult r = a.cuDevicePrimaryCtxRetain(&ctx, d); r != CUDA_SUCCESS) {
      *error = a.Error("cuDevicePrimaryCtxRetain", r);
      return nullptr;
    }
    a.cuCtxSetCurrent(ctx);
    if (!nvrtc_) *error = "NVRTC not found: " + nvrtc_error_;
    return std::make_unique<CudaDevice>(driver_, nvrtc_, d, ctx,
                                        Describe(*driver_, nvrtc_.get(), d, index));
  }

 private:
  bool EnsureLoaded(std::string* error) {
    if (!driver_) {
      std::string why;
      auto driver = Driver::Load(&why);
      if (!driver) {
        *error = why;
        return false;
      }
      driver_ = std::move(driver);
      nvrtc_ = Nvrtc::Load(&nvrtc_error_);
    }
    return true;
  }

  std::shared_ptr<Driver> driver_;
  std::shared_ptr<Nvrtc> nvrtc_;
  std::string nvrtc_error_;
};

}  // namespace

std::unique_ptr<Backend> MakeCudaBackend() {
  return std::make_unique<CudaBackend>();
}

}  // namespace kf
