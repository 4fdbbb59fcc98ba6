#pragma once
// The evaluator's own kernels, run on the device that runs the candidates, so that only figures
// cross the bus: inputs drawn from a counter-based generator (Philox4x32-10; philox.hpp
// reproduces any element on the host), fills and copies of byte ranges, hashes of inputs, scans
// of guard zones, the comparison of an output with the reference (the host comparison's figures,
// compare.hpp, computed the same way), and the count of elements two launches disagree on. One
// program per element type, compiled on first use through the compile cache.

#include <map>
#include <memory>

#include "backend/device.hpp"
#include "core/task.hpp"
#include "eval/compare.hpp"
#include "eval/compile_cache.hpp"

namespace kf {

// Bytes of a range that no longer hold their pattern: how many, and the first and last (offsets
// within the range; -1 when none).
struct RangeScan {
  int64_t changed = 0, first = -1, last = -1;
};

class DeviceTools {
 public:
  DeviceTools(Device& device, const CompileCache& cache);
  ~DeviceTools();
  DeviceTools(const DeviceTools&) = delete;
  DeviceTools& operator=(const DeviceTools&) = delete;

  // Enqueued (asynchronous). `data` holds `n` elements of `dtype`.
  DeviceStatus Draw(BufferHandle data, DType dtype, size_t n, InitSpec::Kind kind, double a,
                    double b, uint64_t seed, uint32_t stream);
  DeviceStatus Fill(BufferHandle buffer, size_t offset, size_t bytes, uint32_t pattern);
  DeviceStatus Copy(BufferHandle src, size_t src_offset, BufferHandle dst, size_t dst_offset,
                    size_t bytes);
  // Synchronous: each waits for the device and reads its figures back.
  DeviceStatus Hash(BufferHandle buffer, size_t offset, size_t bytes, uint64_t* hash);
  DeviceStatus Scan(BufferHandle buffer, size_t offset, size_t bytes, uint32_t pattern,
                    RangeScan* out);
  DeviceStatus Compare(BufferHandle ref, BufferHandle out, DType dtype, size_t n,
                       const Tolerance& tol, uint32_t poison, Figures* figures);
  DeviceStatus Differ(BufferHandle a, BufferHandle b, DType dtype, size_t n, int64_t* count);

  // A failure of the tools themselves (they do not compile or load) throws ToolError.
  struct Program;

 private:
  LoadedKernel& Kernel(DType dtype, const char* name);
  Launch Grid(size_t items) const;

  Device& device_;
  const CompileCache& cache_;
  std::map<DType, std::unique_ptr<Program>> programs_;
  BufferHandle dpart_ = 0, upart_ = 0, hpart_ = 0;
  bool real_is_double_ = true;  // the comparison's arithmetic (OpenCL without fp64: float)
};

}  // namespace kf
