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
  // Figures, enqueued: each returns a ticket whose result is ready after Collect, which waits
  // for the device once and reads back every figure asked for since the last Collect (up to
  // kTickets of them). A failure to enqueue throws ToolError.
  int EnqueueHash(BufferHandle buffer, size_t offset, size_t bytes);
  int EnqueueScan(BufferHandle buffer, size_t offset, size_t bytes, uint32_t pattern);
  int EnqueueCompare(BufferHandle ref, BufferHandle out, DType dtype, size_t n,
                     const Tolerance& tol, uint32_t poison);
  int EnqueueDiffer(BufferHandle a, BufferHandle b, DType dtype, size_t n);
  DeviceStatus Collect();
  uint64_t HashOf(int ticket) const;
  RangeScan ScanOf(int ticket) const;
  Figures FiguresOf(int ticket) const;
  int64_t DifferOf(int ticket) const;
  static constexpr int kTickets = 128;

  // The same, one at a time (enqueue and collect).
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
  enum class Kind { kHash, kScan, kCompare, kDiffer };
  // A ticket: what it asked for, where its figures lie in each arena (0 doubles, 1 words,
  // 2 hashes), its groups, and (after Collect) the figures.
  struct Ticket {
    int serial = 0;  // what the caller holds: unique for the life of the tools
    Kind kind;
    size_t groups = 0;
    int64_t elements = 0;
    size_t offset[3] = {0, 0, 0};
    std::vector<uint64_t> u64;
    std::vector<uint32_t> u32;
    std::vector<double> f64;
  };
  // A ticket with `bytes[a]` of room in each arena, packed after the tickets before it, so a
  // Collect reads each arena in one piece.
  int NewTicket(Kind kind, size_t groups, int64_t elements, const size_t bytes[3]);
  const Ticket& Collected(int ticket) const;
  // The ticket's room in an arena, as a buffer of its own (views are made once per offset).
  BufferHandle Slot(int arena, int ticket);

  Device& device_;
  const CompileCache& cache_;
  std::map<DType, std::unique_ptr<Program>> programs_;
  // Arenas of per-group figures, one slot per ticket: doubles, 32-bit words, 64-bit hashes.
  BufferHandle dpart_ = 0, upart_ = 0, hpart_ = 0;
  std::map<std::pair<int, size_t>, BufferHandle> slots_;  // views of the arenas, by offset
  size_t used_[3] = {0, 0, 0};       // bytes of each arena taken since the last Collect
  std::vector<Ticket> tickets_;      // asked for since the last Collect
  std::map<int, Ticket> collected_;  // by serial: what the last Collect read
  int next_serial_ = 0;
  bool real_is_double_ = true;  // the comparison's arithmetic (OpenCL without fp64: float)
};

}  // namespace kf
