#include "eval/hints.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace kf {

namespace {

bool Has(const std::string& haystack, std::initializer_list<const char*> needles) {
  std::string lower = haystack;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  for (const char* n : needles) {
    if (lower.find(n) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> CompileHints(const std::string& log, const DeviceInfo& d) {
  std::vector<std::string> hints;
  if (Has(log, {"too much shared data", "local memory", "exceeds", "shared memory"}) &&
      Has(log, {"exceed", "too much", "limit"})) {
    hints.push_back(
        fmt::format("shared/local memory over the device limit ({} bytes per group on {})",
                    d.local_mem_bytes, d.name));
  }
  if (Has(log, {"cannot open source file", "file not found"})) {
    hints.push_back(
        d.backend == "cuda"
            ? "missing include: NVRTC sees only the CUDA toolkit headers (cuda_fp16.h, ...)"
            : "missing include: OpenCL kernels are compiled from one file, with no include path");
  }
  if (Has(log, {"is undefined", "undeclared identifier", "implicit declaration"})) {
    hints.push_back(
        "an undefined name: a typo, a missing include, or a @param that is not declared "
        "(parameters arrive as -D defines)");
  }
  if (Has(log, {"entry point"}) && Has(log, {"not found"})) {
    hints.push_back(
        "the '// @kernel NAME' annotation must name a __global__ (CUDA) or __kernel (OpenCL) "
        "function in the file");
  }
  if (Has(log, {"division by zero", "divide by zero"})) {
    hints.push_back(
        "a division by zero at compile time: a template parameter that does not divide");
  }
  if (Has(log, {"static assertion failed", "static_assert"})) {
    hints.push_back(
        "a static_assert failed: this configuration breaks an assumption of the template");
  }
  return hints;
}

std::vector<std::string> LaunchHints(const std::string& error, const Launch& launch,
                                     const DeviceInfo& d) {
  std::vector<std::string> hints;
  int64_t threads = 1;
  for (int64_t b : launch.block) threads *= b;
  if (threads > d.max_work_group_size || Has(error, {"work_group_size", "work_item_size"})) {
    hints.push_back(
        fmt::format("work-group size {} over the device limit {}", threads, d.max_work_group_size));
  }
  if (launch.shared_bytes > 0 && Has(error, {"dynamic shared memory"})) {
    hints.push_back(fmt::format(
        "@shared asks for {} bytes per block; the device allows {} bytes of shared memory per "
        "block in all (static and dynamic)",
        launch.shared_bytes, d.local_mem_bytes));
  }
  if (Has(error, {"out_of_resources", "launch_out_of_resources"})) {
    hints.push_back("too many registers or too much shared memory per group for this block size");
  }
  if (Has(error, {"illegal_address", "illegal address", "out of bounds"})) {
    hints.push_back("an out-of-bounds access: check the guards on ragged sizes");
  }
  return hints;
}

}  // namespace kf
