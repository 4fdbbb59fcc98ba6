#include "eval/device_tools.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "eval/device_tools_source.hpp"
#include "eval/workspace.hpp"

namespace kf {

namespace {

constexpr size_t kGroups = 1024, kGroupSize = 256;
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
  Must(device_.Alloc(kGroups * 2 * sizeof(double), &dpart_), "allocating the tools' figures");
  Must(device_.Alloc(kGroups * 8 * sizeof(uint32_t), &upart_), "allocating the tools' figures");
  Must(device_.Alloc(kGroups * sizeof(uint64_t), &hpart_), "allocating the tools' figures");
  // OpenCL devices without fp64 compare in float; every other compares in double.
  if (device_.info().backend == "opencl") {
    const char* probe =
        "#ifdef cl_khr_fp64\n#define R 8\n#else\n#define R 4\n#endif\n"
        "__kernel void kf_real(__global uint* o) { o[0] = R; }\n";
    CompileResult c = CompileCached(device_, cache_, {probe, "kf_real", {}});
    std::string error;
    std::unique_ptr<LoadedKernel> k = c.ok ? device_.Load(c.artifact, &error) : nullptr;
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
  for (BufferHandle h : {dpart_, upart_, hpart_})
    if (h) device_.Free(h);
}

LoadedKernel& DeviceTools::Kernel(DType dtype, const char* name) {
  std::unique_ptr<Program>& p = programs_[dtype];
  if (!p) {
    p = std::make_unique<Program>();
    bool cuda = device_.info().backend == "cuda";
    CompileRequest request{
        kDeviceToolsSource,
        "kf_random",
        {{"KF_CUDA", cuda ? "1" : "0"}, {"KF_DT", std::to_string(DTypeCode(dtype))}}};
    CompileResult c = CompileCached(device_, cache_, request);
    if (!c.ok) throw ToolError("the evaluator's own kernels do not compile:\n" + c.log);
    for (const char* entry : kEntries) {
      Artifact a = c.artifact;
      a.symbol = entry;  // one program holds every entry point (extern "C" names on CUDA)
      std::string error;
      std::unique_ptr<LoadedKernel> k = device_.Load(a, &error);
      if (!k) throw ToolError(fmt::format("the evaluator's kernel {}: {}", entry, error));
      p->kernels[entry] = std::move(k);
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
                      F32(static_cast<float>(b))};
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

DeviceStatus DeviceTools::Hash(BufferHandle buffer, size_t offset, size_t bytes, uint64_t* hash) {
  *hash = 0;
  if (bytes == 0) return DeviceStatus::Ok();
  Launch grid = Grid((bytes + 3) / 4);
  KernelArg args[] = {Buf(buffer), U64(offset), U64(bytes), Buf(hpart_)};
  if (DeviceStatus s = device_.Enqueue(Kernel(DType::kF32, "kf_hash"), args, grid); !s.ok())
    return s;
  std::vector<uint64_t> part(static_cast<size_t>(grid.grid[0]));
  if (DeviceStatus s = device_.Read(hpart_, part.data(), part.size() * 8); !s.ok()) return s;
  for (uint64_t p : part) *hash += p;
  return DeviceStatus::Ok();
}

DeviceStatus DeviceTools::Scan(BufferHandle buffer, size_t offset, size_t bytes, uint32_t pattern,
                               RangeScan* out) {
  *out = RangeScan{};
  if (bytes == 0) return DeviceStatus::Ok();
  Launch grid = Grid(bytes);
  KernelArg args[] = {Buf(buffer), U64(offset), U64(bytes), U32(pattern), Buf(upart_)};
  if (DeviceStatus s = device_.Enqueue(Kernel(DType::kF32, "kf_scan"), args, grid); !s.ok())
    return s;
  std::vector<uint32_t> part(3 * static_cast<size_t>(grid.grid[0]));
  if (DeviceStatus s = device_.Read(upart_, part.data(), part.size() * 4); !s.ok()) return s;
  for (size_t g = 0; g < part.size() / 3; ++g) {
    if (part[3 * g] == 0) continue;
    out->changed += part[3 * g];
    int64_t first = part[3 * g + 1], last = part[3 * g + 2];
    if (out->first < 0 || first < out->first) out->first = first;
    out->last = std::max(out->last, last);
  }
  return DeviceStatus::Ok();
}

DeviceStatus DeviceTools::Compare(BufferHandle ref, BufferHandle out, DType dtype, size_t n,
                                  const Tolerance& tol, uint32_t poison, Figures* f) {
  *f = Figures{};
  f->elements = static_cast<int64_t>(n);
  if (n == 0) return DeviceStatus::Ok();
  Launch grid = Grid(n);
  KernelArg args[] = {Buf(ref),
                      Buf(out),
                      U64(n),
                      Real(tol.atol, real_is_double_),
                      Real(tol.rtol, real_is_double_),
                      U32(poison),
                      Buf(dpart_),
                      Buf(upart_)};
  if (DeviceStatus s = device_.Enqueue(Kernel(dtype, "kf_compare"), args, grid); !s.ok()) return s;
  const size_t groups = static_cast<size_t>(grid.grid[0]);
  std::vector<uint32_t> u(8 * groups);
  std::vector<double> d(2 * groups);
  if (DeviceStatus s = device_.Read(upart_, u.data(), u.size() * 4); !s.ok()) return s;
  if (real_is_double_) {
    if (DeviceStatus s = device_.Read(dpart_, d.data(), d.size() * 8); !s.ok()) return s;
  } else {
    std::vector<float> fl(2 * groups);
    if (DeviceStatus s = device_.Read(dpart_, fl.data(), fl.size() * 4); !s.ok()) return s;
    std::copy(fl.begin(), fl.end(), d.begin());
  }
  for (size_t g = 0; g < groups; ++g) {
    const uint32_t* p = &u[8 * g];
    if (d[2 * g] > f->max_abs_err ||
        (d[2 * g] == f->max_abs_err && p[5] != 0xffffffffu && (f->worst < 0 || p[5] < f->worst))) {
      f->max_abs_err = d[2 * g];
      if (p[5] != 0xffffffffu) f->worst = p[5];
    }
    f->max_rel_err = std::max(f->max_rel_err, d[2 * g + 1]);
    f->over_1pct += p[0];
    f->nan_count += p[1];
    f->unwritten += p[2];
    f->out_of_tol += p[3];
    if (p[4] != 0xffffffffu && (f->first_bad < 0 || p[4] < f->first_bad)) f->first_bad = p[4];
  }
  return DeviceStatus::Ok();
}

DeviceStatus DeviceTools::Differ(BufferHandle a, BufferHandle b, DType dtype, size_t n,
                                 int64_t* count) {
  *count = 0;
  if (n == 0) return DeviceStatus::Ok();
  Launch grid = Grid(n);
  KernelArg args[] = {Buf(a), Buf(b), U64(n), Buf(upart_)};
  if (DeviceStatus s = device_.Enqueue(Kernel(dtype, "kf_differ"), args, grid); !s.ok()) return s;
  std::vector<uint32_t> part(static_cast<size_t>(grid.grid[0]));
  if (DeviceStatus s = device_.Read(upart_, part.data(), part.size() * 4); !s.ok()) return s;
  for (uint32_t p : part) *count += p;
  return DeviceStatus::Ok();
}

}  // namespace kf
