#include "eval/device_tools.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "eval/device_tools_source.hpp"
#include "eval/philox.hpp"
#include "eval/workspace.hpp"

namespace kf {

namespace {

constexpr size_t kGroups = 1024, kGroupSize = 256;
// The arenas of figures: doubles (2 per group), words (8 per group), hashes (1 per group), room for
// kTickets of the largest; each ticket's room starts on a multiple of kRoomAlign (a view's
// origin must be aligned).
constexpr size_t kArenaBytes[3] = {kGroups * 2 * 8 * 32, kGroups * 8 * 4 * 32, kGroups * 8 * 32};
constexpr size_t kRoomAlign = 4096;
constexpr const char* kEntries[] = {"kf_random", "kf_differ", "kf_compare", "kf_fill",
                                    "kf_copy",   "kf_hash",   "kf_scan"};

int DTypeCode(DType t) {
  switch (t) {
    case DType::kF16: return 0;
    case DType::kF32: return 1;
    case DType::kF64: return 2;
    case DType::kI32: return 3;
    case DType::kI64: return 4;
    case DType::kU8: return 5;
    case DType::kBF16: return 6;
  }
  return 1;
}

KernelArg Buf(BufferHandle h) {
  KernelArg a{};
  a.kind = KernelArg::Kind::kBuffer;
  a.buffer = h;
  return a;
}
KernelArg U64(uint64_t v) {
  KernelArg a{};
  a.kind = KernelArg::Kind::kI64;
  a.i64 = static_cast<int64_t>(v);
  return a;
}
KernelArg U32(uint32_t v) {
  KernelArg a{};
  a.kind = KernelArg::Kind::kI32;
  a.i32 = static_cast<int32_t>(v);
  return a;
}
KernelArg F32(float v) {
  KernelArg a{};
  a.kind = KernelArg::Kind::kF32;
  a.f32 = v;
  return a;
}
KernelArg Real(double v, bool is_double) {
  KernelArg a{};
  if (is_double) {
    a.kind = KernelArg::Kind::kF64;
    a.f64 = v;
  } else {
    a.kind = KernelArg::Kind::kF32;
    a.f32 = static_cast<float>(v);
  }
  return a;
}

}  // namespace

struct DeviceTools::Program {
  std::map<std::string, std::unique_ptr<LoadedKernel>> kernels;
};

DeviceTools::DeviceTools(Device& device, const CompileCache& cache)
    : device_(device), cache_(cache) {
  Must(device_.Alloc(kArenaBytes[0], &dpart_), "allocating the tools' figures");
  Must(device_.Alloc(kArenaBytes[1], &upart_), "allocating the tools' figures");
  Must(device_.Alloc(kArenaBytes[2], &hpart_), "allocating the tools' figures");
  // OpenCL devices without fp64 compare in float; every other compares in double.
  if (device_.info().backend == "opencl") {
    const char* probe =
        "#ifdef cl_khr_fp64\n#define R 8\n#else\n#define R 4\n#endif\n"
        "__kernel void kf_real(__global uint* o) { o[0] = R; }\n";
    CompileResult c = CompileCached(device_, cache_, {probe, {"kf_real"}, {}});
    std::string error;
    std::unique_ptr<LoadedKernel> k =
        c.ok ? device_.Load(c.artifact, c.artifact.symbols.front(), &error) : nullptr;
    if (!k) throw ToolError("the evaluator's probe kernel: " + (c.ok ? error : c.log));
    KernelArg out = Buf(upart_);
    Must(device_.Enqueue(*k, std::span<const KernelArg>(&out, 1), Launch{{1}, {1}}),
         "the evaluator's probe kernel");
    uint32_t size = 0;
    Must(device_.Read(upart_, &size, sizeof(size)), "reading the probe");
    real_is_double_ = size == 8;
  }
}

DeviceTools::~DeviceTools() {
  programs_.clear();
  for (const auto& [key, view] : slots_) device_.Free(view);
  for (BufferHandle h : {dpart_, upart_, hpart_})
    if (h) device_.Free(h);
}

LoadedKernel& DeviceTools::Kernel(DType dtype, const char* name) {
  std::unique_ptr<Program>& p = programs_[dtype];
  if (!p) {
    p = std::make_unique<Program>();
    bool cuda = device_.info().backend == "cuda";
    // One module holds every entry point.
    CompileRequest request{
        kDeviceToolsSource,
        {std::begin(kEntries), std::end(kEntries)},
        {{"KF_CUDA", cuda ? "1" : "0"}, {"KF_DT", std::to_string(DTypeCode(dtype))}}};
    CompileResult c = CompileCached(device_, cache_, request);
    if (!c.ok) throw ToolError("the evaluator's own kernels do not compile:\n" + c.log);
    for (size_t i = 0; i < c.artifact.symbols.size(); ++i) {
      std::string error;
      std::unique_ptr<LoadedKernel> k = device_.Load(c.artifact, c.artifact.symbols[i], &error);
      if (!k) throw ToolError(fmt::format("the evaluator's kernel {}: {}", kEntries[i], error));
      p->kernels[kEntries[i]] = std::move(k);
    }
  }
  return *p->kernels.at(name);
}

Launch DeviceTools::Grid(size_t items) const {
  size_t block = kGroupSize;
  int64_t limit = device_.info().max_work_group_size;
  while (limit > 0 && static_cast<int64_t>(block) > limit) block /= 2;
  size_t groups = std::clamp<size_t>((items + block - 1) / block, 1, kGroups);
  return Launch{{static_cast<int64_t>(groups)}, {static_cast<int64_t>(block)}};
}

DeviceStatus DeviceTools::Draw(BufferHandle data, DType dtype, size_t n, InitSpec::Kind kind,
                               double a, double b, uint64_t seed, uint32_t stream) {
  if (n == 0) return DeviceStatus::Ok();
  KernelArg args[] = {Buf(data),
                      U64(n),
                      U32(static_cast<uint32_t>(seed)),
                      U32(static_cast<uint32_t>(seed >> 32)),
                      U32(stream),
                      U32(kind == InitSpec::Kind::kNormal ? 0 : 1),
                      F32(static_cast<float>(a)),
                      F32(DrawUpperBound(kind, a, b))};
  return device_.Enqueue(Kernel(dtype, "kf_random"), args, Grid(n));
}

DeviceStatus DeviceTools::Fill(BufferHandle buffer, size_t offset, size_t bytes, uint32_t pattern) {
  if (bytes == 0) return DeviceStatus::Ok();
  KernelArg args[] = {Buf(buffer), U64(offset), U64(bytes), U32(pattern)};
  return device_.Enqueue(Kernel(DType::kF32, "kf_fill"), args, Grid((bytes + 3) / 4));
}

DeviceStatus DeviceTools::Copy(BufferHandle src, size_t src_offset, BufferHandle dst,
                               size_t dst_offset, size_t bytes) {
  if (bytes == 0) return DeviceStatus::Ok();
  KernelArg args[] = {Buf(src), U64(src_offset), Buf(dst), U64(dst_offset), U64(bytes)};
  return device_.Enqueue(Kernel(DType::kF32, "kf_copy"), args, Grid((bytes + 3) / 4));
}

int DeviceTools::NewTicket(Kind kind, size_t groups, int64_t elements, const size_t bytes[3]) {
  if (static_cast<int>(tickets_.size()) >= kTickets)
    throw ToolError("the evaluator asked for more figures than one collection holds");
  Ticket t{next_serial_++, kind, groups, elements, {0, 0, 0}, {}, {}, {}};
  for (int a = 0; a < 3; ++a) {
    if (bytes[a] == 0) continue;
    if (used_[a] + bytes[a] > kArenaBytes[a])
      throw ToolError("the evaluator's figures overflow their arena");
    t.offset[a] = used_[a];
    used_[a] += (bytes[a] + kRoomAlign - 1) / kRoomAlign * kRoomAlign;
  }
  tickets_.push_back(std::move(t));
  return tickets_.back().serial;
}

BufferHandle DeviceTools::Slot(int arena, int ticket) {
  size_t offset = tickets_.back().offset[arena];  // the ticket just made
  (void)ticket;
  auto key = std::make_pair(arena, offset);
  if (auto it = slots_.find(key); it != slots_.end()) return it->second;
  BufferHandle parent = arena == 0 ? dpart_ : arena == 1 ? upart_ : hpart_;
  BufferHandle view = 0;
  Must(device_.View(parent, offset, kArenaBytes[arena] - offset, &view),
       "a view of the tools' figures");
  slots_[key] = view;
  return view;
}

int DeviceTools::EnqueueHash(BufferHandle buffer, size_t offset, size_t bytes) {
  Launch grid = Grid(std::max<size_t>((bytes + 3) / 4, 1));
  const size_t g = static_cast<size_t>(grid.grid[0]), room[3] = {0, 0, g * 8};
  int t = NewTicket(Kind::kHash, g, 0, room);
  KernelArg args[] = {Buf(buffer), U64(offset), U64(bytes), Buf(Slot(2, t))};
  Must(device_.Enqueue(Kernel(DType::kF32, "kf_hash"), args, grid), "hashing a buffer");
  return t;
}

int DeviceTools::EnqueueScan(BufferHandle buffer, size_t offset, size_t bytes, uint32_t pattern) {
  Launch grid = Grid(std::max<size_t>(bytes, 1));
  const size_t g = static_cast<size_t>(grid.grid[0]), room[3] = {0, 3 * g * 4, 0};
  int t = NewTicket(Kind::kScan, g, 0, room);
  KernelArg args[] = {Buf(buffer), U64(offset), U64(bytes), U32(pattern), Buf(Slot(1, t))};
  Must(device_.Enqueue(Kernel(DType::kF32, "kf_scan"), args, grid), "scanning a guard zone");
  return t;
}

int DeviceTools::EnqueueCompare(BufferHandle ref, BufferHandle out, DType dtype, size_t n,
                                const Tolerance& tol, uint32_t poison) {
  Launch grid = Grid(std::max<size_t>(n, 1));
  const size_t g = static_cast<size_t>(grid.grid[0]), room[3] = {2 * g * 8, 8 * g * 4, 0};
  int t = NewTicket(Kind::kCompare, g, static_cast<int64_t>(n), room);
  KernelArg args[] = {Buf(ref),
                      Buf(out),
                      U64(n),
                      Real(tol.atol, real_is_double_),
                      Real(tol.rtol, real_is_double_),
                      U32(poison),
                      Buf(Slot(0, t)),
                      Buf(Slot(1, t))};
  Must(device_.Enqueue(Kernel(dtype, "kf_compare"), args, grid), "comparing an output");
  return t;
}

int DeviceTools::EnqueueDiffer(BufferHandle a, BufferHandle b, DType dtype, size_t n) {
  Launch grid = Grid(std::max<size_t>(n, 1));
  const size_t g = static_cast<size_t>(grid.grid[0]), room[3] = {0, g * 4, 0};
  int t = NewTicket(Kind::kDiffer, g, static_cast<int64_t>(n), room);
  KernelArg args[] = {Buf(a), Buf(b), U64(n), Buf(Slot(1, t))};
  Must(device_.Enqueue(Kernel(dtype, "kf_differ"), args, grid), "comparing two launches");
  return t;
}

DeviceStatus DeviceTools::Collect() {
  std::vector<Ticket> tickets = std::move(tickets_);
  tickets_.clear();
  size_t used[3] = {used_[0], used_[1], used_[2]};
  for (size_t& u : used_) u = 0;
  collected_.clear();
  if (DeviceStatus s = device_.Synchronize(); !s.ok()) return s;
  // Each arena in one read: the tickets' rooms are packed from its start.
  std::vector<std::byte> arena[3];
  const BufferHandle handles[3] = {dpart_, upart_, hpart_};
  for (int a = 0; a < 3; ++a) {
    arena[a].resize(used[a]);
    if (used[a] == 0) continue;
    if (DeviceStatus s = device_.Read(handles[a], arena[a].data(), used[a]); !s.ok()) return s;
  }
  auto copy = [&](int a, const Ticket& k, void* dst, size_t bytes) {
    std::memcpy(dst, arena[a].data() + k.offset[a], bytes);
  };
  for (Ticket& k : tickets) {
    const size_t g = k.groups;
    switch (k.kind) {
      case Kind::kHash:
        k.u64.resize(g);
        copy(2, k, k.u64.data(), g * 8);
        break;
      case Kind::kScan:
        k.u32.resize(3 * g);
        copy(1, k, k.u32.data(), 3 * g * 4);
        break;
      case Kind::kDiffer:
        k.u32.resize(g);
        copy(1, k, k.u32.data(), g * 4);
        break;
      case Kind::kCompare:
        k.u32.resize(8 * g);
        k.f64.resize(2 * g);
        copy(1, k, k.u32.data(), 8 * g * 4);
        if (real_is_double_) {
          copy(0, k, k.f64.data(), 2 * g * 8);
        } else {
          std::vector<float> fl(2 * g);
          copy(0, k, fl.data(), 2 * g * 4);
          std::copy(fl.begin(), fl.end(), k.f64.begin());
        }
        break;
    }
  }
  for (Ticket& k : tickets) {
    int serial = k.serial;
    collected_.emplace(serial, std::move(k));
  }
  return DeviceStatus::Ok();
}

const DeviceTools::Ticket& DeviceTools::Collected(int ticket) const {
  auto it = collected_.find(ticket);
  if (it == collected_.end())
    throw ToolError("internal: the evaluator read figures another collection had taken");
  return it->second;
}

uint64_t DeviceTools::HashOf(int ticket) const {
  uint64_t h = 0;
  for (uint64_t p : Collected(ticket).u64) h += p;
  return h;
}

RangeScan DeviceTools::ScanOf(int ticket) const {
  RangeScan out;
  const std::vector<uint32_t>& part = Collected(ticket).u32;
  for (size_t g = 0; g < part.size() / 3; ++g) {
    if (part[3 * g] == 0) continue;
    out.changed += part[3 * g];
    int64_t first = part[3 * g + 1], last = part[3 * g + 2];
    if (out.first < 0 || first < out.first) out.first = first;
    out.last = std::max(out.last, last);
  }
  return out;
}

Figures DeviceTools::FiguresOf(int ticket) const {
  const Ticket& k = Collected(ticket);
  Figures f;
  f.elements = k.elements;
  for (size_t g = 0; g < k.groups; ++g) {
    const uint32_t* p = &k.u32[8 * g];
    double abs = k.f64[2 * g];
    if (p[5] != 0xffffffffu &&
        (abs > f.max_abs_err || (abs == f.max_abs_err && (f.worst < 0 || p[5] < f.worst)))) {
      f.max_abs_err = abs;
      f.worst = p[5];
    }
    f.max_rel_err = std::max(f.max_rel_err, k.f64[2 * g + 1]);
    f.over_1pct += p[0];
    f.nan_count += p[1];
    f.unwritten += p[2];
    f.out_of_tol += p[3];
    if (p[4] != 0xffffffffu && (f.first_bad < 0 || p[4] < f.first_bad)) f.first_bad = p[4];
  }
  return f;
}

int64_t DeviceTools::DifferOf(int ticket) const {
  int64_t n = 0;
  for (uint32_t p : Collected(ticket).u32) n += p;
  return n;
}

DeviceStatus DeviceTools::Hash(BufferHandle buffer, size_t offset, size_t bytes, uint64_t* hash) {
  int t = EnqueueHash(buffer, offset, bytes);
  DeviceStatus s = Collect();
  *hash = s.ok() ? HashOf(t) : 0;
  return s;
}

DeviceStatus DeviceTools::Scan(BufferHandle buffer, size_t offset, size_t bytes, uint32_t pattern,
                               RangeScan* out) {
  int t = EnqueueScan(buffer, offset, bytes, pattern);
  DeviceStatus s = Collect();
  *out = s.ok() ? ScanOf(t) : RangeScan{};
  return s;
}

DeviceStatus DeviceTools::Compare(BufferHandle ref, BufferHandle out, DType dtype, size_t n,
                                  const Tolerance& tol, uint32_t poison, Figures* f) {
  int t = EnqueueCompare(ref, out, dtype, n, tol, poison);
  DeviceStatus s = Collect();
  *f = s.ok() ? FiguresOf(t) : Figures{};
  return s;
}

DeviceStatus DeviceTools::Differ(BufferHandle a, BufferHandle b, DType dtype, size_t n,
                                 int64_t* count) {
  int t = EnqueueDiffer(a, b, dtype, n);
  DeviceStatus s = Collect();
  *count = s.ok() ? DifferOf(t) : 0;
  return s;
}

}  // namespace kf
