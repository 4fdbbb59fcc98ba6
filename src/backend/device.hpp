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

#include "core/compile.hpp"
#include "core/device_info.hpp"
#include "core/kernel.hpp"

namespace kf {

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
  // Dynamic shared memory per group in bytes (a CUDA kernel's @shared); 0 for none. A backend
  // without it fails a launch that asks for any.
  int64_t shared_bytes = 0;
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

// One launch of a sequence: a loaded kernel (not owned) and its geometry. A candidate of several
// entry points is several steps, launched in order on the same arguments and timed as one.
struct LaunchStep {
  LoadedKernel* kernel = nullptr;
  Launch launch;
};

struct LaunchResult {
  DeviceStatus status = DeviceStatus::Ok();
  double elapsed_ms = 0.0;  // device-event time of the launches alone, first start to last end
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceInfo& info() const = 0;

  virtual CompileResult Compile(const CompileRequest& request) = 0;
  // Loads the kernel `symbol` (one of `artifact.symbols`) of a compiled module.
  virtual std::unique_ptr<LoadedKernel> Load(const Artifact& artifact, const std::string& symbol,
                                             std::string* error) = 0;

  virtual DeviceStatus Alloc(size_t bytes, BufferHandle* out) = 0;
  virtual void Free(BufferHandle buffer) = 0;
  virtual DeviceStatus Write(BufferHandle buffer, const void* src, size_t bytes) = 0;
  virtual DeviceStatus Read(BufferHandle buffer, void* dst, size_t bytes) = 0;
  virtual DeviceStatus Fill(BufferHandle buffer, uint32_t pattern, size_t bytes) = 0;

  // Launches the steps in order and waits for completion; timed with device events from the start
  // of the first to the end of the last. A failure names the step when there are several.
  virtual LaunchResult Run(std::span<const LaunchStep> steps, std::span<const KernelArg> args) = 0;
  // Evicts the last-level cache (writes a scratch buffer of twice its size) and waits.
  virtual DeviceStatus FlushCache() = 0;

  // Asynchronous work, in order on the device's one queue; errors of the work itself show at
  // Synchronize (a Read synchronises too).
  // A buffer that is `bytes` of `parent` from `offset` (a multiple of ViewAlignment()); freed with
  // Free, before its parent.
  virtual DeviceStatus View(BufferHandle parent, size_t offset, size_t bytes,
                            BufferHandle* out) = 0;
  virtual size_t ViewAlignment() const = 0;
  virtual DeviceStatus Enqueue(LoadedKernel& kernel, std::span<const KernelArg> args,
                               const Launch& launch) = 0;
  // Enqueues the steps in order, timed together with device events (the first's start to the
  // last's end) into `slot` (0, 1, ...): ElapsedMs reads it after a Synchronize.
  virtual DeviceStatus EnqueueTimed(std::span<const LaunchStep> steps,
                                    std::span<const KernelArg> args, int slot) = 0;
  virtual DeviceStatus ElapsedMs(int slot, double* ms) = 0;
  virtual DeviceStatus EnqueueFlushCache() = 0;
  virtual DeviceStatus Synchronize() = 0;
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

// A single launch as a sequence of one step.
inline std::vector<LaunchStep> OneStep(LoadedKernel& kernel, Launch launch) {
  return {LaunchStep{&kernel, std::move(launch)}};
}
// "launch 2 of 3: " where a sequence has several steps, "" where it has one: the prefix of a
// failure's message.
std::string StepPrefix(size_t step, size_t steps);

// Fills and reads back a small buffer (allocated on the first call into `*probe`, kept by the
// device): the second half of every HealthCheck.
DeviceStatus RoundTripProbe(Device& device, BufferHandle* probe);

// Compiles for a device without opening it (CUDA: NVRTC for the target's architecture). Used by
// builder processes, so compiling needs neither a device context nor the device's process.
class Compiler {
 public:
  virtual ~Compiler() = default;
  virtual CompileResult Compile(const CompileRequest& request) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // Lists devices; when the backend is unusable here (no driver), returns none and says why.
  virtual std::vector<DeviceInfo> Enumerate(std::string* why_none) = 0;
  virtual std::unique_ptr<Device> Open(int index, std::string* error) = 0;
  // A compiler for `target` that needs no opened device, or null (and why) when this backend
  // compiles only where the device is (OpenCL).
  virtual std::unique_ptr<Compiler> OfflineCompiler(const DeviceInfo& target,
                                                    std::string* why_not) {
    (void)target;
    *why_not = std::string(name()) + " compiles only on an opened device";
    return nullptr;
  }
};

}  // namespace kf
