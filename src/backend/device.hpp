#pragma once
// The Backend/Device interface every backend implements (one folder per backend). A Device
// compiles source to an artifact, loads it, moves memory, launches and times kernels. Device
// failures are returned as values (DeviceStatus), never thrown: a bad kernel is an outcome.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/kernel.hpp"

namespace kf {

enum class DeviceClass { kGpu, kCpu, kOther };
std::string_view DeviceClassName(DeviceClass c);

struct DeviceInfo {
  std::string backend;  // "cuda" | "opencl"
  int index = 0;        // within the backend
  std::string name, vendor, driver_version, compiler_version;
  std::string arch;  // "sm_90" for CUDA; the OpenCL C version for OpenCL
  DeviceClass device_class = DeviceClass::kOther;
  int compute_units = 0;
  int64_t max_work_group_size = 0;
  int64_t local_mem_bytes = 0;
  int sub_group_width = 1;
  int64_t global_mem_bytes = 0;
  int64_t cache_bytes = 0;          // last-level cache the timer flushes (L2 on GPUs)
  double spec_bandwidth_gbs = 0.0;  // from clocks and bus width where the driver says; 0 unknown

  std::string Selector() const { return backend + ":" + std::to_string(index); }
  Language language() const { return backend == "cuda" ? Language::kCuda : Language::kOpenCL; }
};

class [[nodiscard]] DeviceStatus {
 public:
  static DeviceStatus Ok() { return DeviceStatus(); }
  static DeviceStatus Fail(std::string message) { return DeviceStatus(std::move(message)); }
  bool ok() const { return message_.empty(); }
  const std::string& message() const { return message_; }

 private:
  DeviceStatus() = default;
  explicit DeviceStatus(std::string m)
      : message_(m.empty() ? "unknown device error" : std::move(m)) {}
  std::string message_;
};

// A compiled kernel as bytes plus the symbol to look up (CUDA lowers C++ names).
struct Artifact {
  std::vector<std::byte> binary;
  std::string symbol;
  std::string listing;  // an intermediate text the classifier reads (PTX for CUDA), or ""
};

struct CompileResult {
  bool ok = false;
  Artifact artifact;
  std::string log;
};

struct CompileRequest {
  std::string source;
  std::string entry;
  std::vector<std::pair<std::string, std::string>> defines;
};

using BufferHandle = uint64_t;

struct KernelArg {
  enum class Kind { kBuffer, kI32, kI64, kF32, kF64 };
  Kind kind;
  BufferHandle buffer = 0;
  int32_t i32 = 0;
  int64_t i64 = 0;
  float f32 = 0;
  double f64 = 0;
};

struct Launch {
  std::vector<int64_t> grid;   // groups per dimension
  std::vector<int64_t> block;  // work-items per group
};

// What the compiled kernel needs per group, read from the driver after loading.
struct KernelResources {
  int64_t static_local_bytes = 0;  // local/shared memory declared in the source
  int64_t max_group_size = 0;      // the most work-items per group this kernel can launch with
};

class LoadedKernel {
 public:
  virtual ~LoadedKernel() = default;
  virtual KernelResources resources() const = 0;
};

struct LaunchResult {
  DeviceStatus status = DeviceStatus::Ok();
  double elapsed_ms = 0.0;  // device-event time of the launch alone
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceInfo& info() const = 0;

  virtual CompileResult Compile(const CompileRequest& request) = 0;
  virtual std::unique_ptr<LoadedKernel> Load(const Artifact& artifact, std::string* error) = 0;

  virtual DeviceStatus Alloc(size_t bytes, BufferHandle* out) = 0;
  virtual void Free(BufferHandle buffer) = 0;
  virtual DeviceStatus Write(BufferHandle buffer, const void* src, size_t bytes) = 0;
  virtual DeviceStatus Read(BufferHandle buffer, void* dst, size_t bytes) = 0;
  virtual DeviceStatus Fill(BufferHandle buffer, uint32_t pattern, size_t bytes) = 0;

  // Launches and waits for completion; the launch is timed with device events.
  virtual LaunchResult Run(LoadedKernel& kernel, std::span<const KernelArg> args,
                           const Launch& launch) = 0;
  // Evicts the last-level cache (writes a scratch buffer of twice its size) and waits.
  virtual DeviceStatus FlushCache() = 0;
  // Synchronises and runs a trivial operation: fails when an earlier launch left the device or
  // its context unusable (a sticky CUDA error), after which only a new process helps.
  virtual DeviceStatus HealthCheck() = 0;
};

// Owns one device allocation.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Device* device, BufferHandle handle, size_t bytes)
      : device_(device), handle_(handle), bytes_(bytes) {}
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      Release();
      std::swap(device_, o.device_);
      std::swap(handle_, o.handle_);
      std::swap(bytes_, o.bytes_);
    }
    return *this;
  }
  ~DeviceBuffer() { Release(); }

  BufferHandle handle() const { return handle_; }
  size_t bytes() const { return bytes_; }

 private:
  void Release() {
    if (device_ && handle_) device_->Free(handle_);
    device_ = nullptr;
    handle_ = 0;
  }
  Device* device_ = nullptr;
  BufferHandle handle_ = 0;
  size_t bytes_ = 0;
};

// Allocates, fills and reads back a small buffer: the second half of every HealthCheck.
DeviceStatus RoundTripProbe(Device& device);

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // Lists devices; when the backend is unusable here (no driver), returns none and says why.
  virtual std::vector<DeviceInfo> Enumerate(std::string* why_none) = 0;
  virtual std::unique_ptr<Device> Open(int index, std::string* error) = 0;
};

}  // namespace kf
