#include "eval/ghost_replay.hpp"

#include <fmt/format.h>

namespace kf {

namespace {

std::string ScalarType(DType t, bool cuda) {
  switch (t) {
    case DType::kI64: return cuda ? "long long" : "long";
    case DType::kF32: return "float";
    case DType::kF64: return "double";
    default: return "int";
  }
}

}  // namespace

std::string GhostKernelSource(const Task& task, Language language) {
  const bool cuda = language == Language::kCuda;
  std::string params;
  bool f64 = false;
  for (size_t i = 0; i < task.args.size(); ++i) {
    const ArgSpec& a = task.args[i];
    if (!params.empty()) params += ", ";
    if (a.is_buffer) {
      params += fmt::format("{} a{}", cuda ? "void*" : "__global uchar*", i);
    } else {
      params += fmt::format("{} a{}", ScalarType(a.dtype, cuda), i);
      f64 = f64 || a.dtype == DType::kF64;
    }
  }
  if (cuda) return fmt::format("extern \"C\" __global__ void {}({}) {{}}\n", kGhostEntry, params);
  return fmt::format("{}__kernel void {}({}) {{}}\n",
                     f64 ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "", kGhostEntry,
                     params);
}

}  // namespace kf
