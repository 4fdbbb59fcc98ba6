#include "backend/cuda/cuda_api.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
// NVRTC carries a static libstdc++ whose initialiser allocates an exception pool at dlopen; after
// dlclose LeakSanitizer reports it as a leak in an unknown module that no suppression can name.
// What a foreign library allocates while loading or compiling is not ours to free, so leak
// checking pauses there.
#define KF_IGNORE_FOREIGN_LEAKS __lsan::ScopedDisabler lsan_disabler
#else
#define KF_IGNORE_FOREIGN_LEAKS
#endif

namespace kf::cuda {

std::unique_ptr<Library> Library::Open(const std::vector<std::string>& names, std::string* error) {
  KF_IGNORE_FOREIGN_LEAKS;
  std::string tried;
  for (const std::string& name : names) {
    if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))
      return std::unique_ptr<Library>(new Library(h, name));
    tried += (tried.empty() ? "" : ", ") + name;
  }
  *error = fmt::format("none of {} could be loaded", tried);
  return nullptr;
}

Library::~Library() {
  dlclose(handle_);
}

void* Library::Symbol(const char* name) const {
  return dlsym(handle_, name);
}

namespace {

// Fills `slot` from the first symbol name that exists; returns false when none does.
template <typename Fn>
bool Bind(const Library& lib, Fn& slot, std::initializer_list<const char*> names,
          std::string* missing) {
  for (const char* n : names) {
    if (void* p = lib.Symbol(n)) {
      slot = reinterpret_cast<Fn>(p);
      return true;
    }
  }
  *missing += (missing->empty() ? "" : ", ") + std::string(*names.begin());
  return false;
}

std::vector<std::string> NvrtcCandidates() {
  std::vector<std::string> names = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"};
  for (const char* root : std::initializer_list<const char*>{
           std::getenv("CUDA_PATH"), std::getenv("CUDA_HOME"), "/usr/local/cuda"}) {
    if (!root || !*root) continue;
    for (const char* lib : {"lib64", "lib", "targets/x86_64-linux/lib"}) {
      for (const char* so : {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"}) {
        names.push_back(fmt::format("{}/{}/{}", root, lib, so));
      }
    }
  }
  return names;
}

}  // namespace

std::string DriverApi::Error(const char* what, CUresult r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName) cuGetErrorName(r, &name);
  if (cuGetErrorString) cuGetErrorString(r, &text);
  return fmt::format("{} failed: {} ({})", what, name ? name : std::to_string(r).c_str(),
                     text ? text : "no description");
}

std::unique_ptr<Driver> Driver::Load(std::string* error) {
  auto lib = Library::Open({"libcuda.so.1", "libcuda.so"}, error);
  if (!lib) {
    *error = "no NVIDIA driver: " + *error;
    return nullptr;
  }
  auto d = std::unique_ptr<Driver>(new Driver());
  DriverApi& a = d->api_;
  std::string missing;
  Bind(*lib, a.cuInit, {"cuInit"}, &missing);
  Bind(*lib, a.cuDriverGetVersion, {"cuDriverGetVersion"}, &missing);
  Bind(*lib, a.cuDeviceGetCount, {"cuDeviceGetCount"}, &missing);
  Bind(*lib, a.cuDeviceGet, {"cuDeviceGet"}, &missing);
  Bind(*lib, a.cuDeviceGetName, {"cuDeviceGetName"}, &missing);
  Bind(*lib, a.cuDeviceGetAttribute, {"cuDeviceGetAttribute"}, &missing);
  Bind(*lib, a.cuDeviceTotalMem, {"cuDeviceTotalMem_v2"}, &missing);
  Bind(*lib, a.cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"}, &missing);
  Bind(*lib, a.cuDevicePrimaryCtxRelease,
       {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}, &missing);
  Bind(*lib, a.cuCtxSetCurrent, {"cuCtxSetCurrent"}, &missing);
  Bind(*lib, a.cuCtxSynchronize, {"cuCtxSynchronize"}, &missing);
  Bind(*lib, a.cuModuleLoadData, {"cuModuleLoadData"}, &missing);
  Bind(*lib, a.cuModuleUnload, {"cuModuleUnload"}, &missing);
  Bind(*lib, a.cuModuleGetFunction, {"cuModuleGetFunction"}, &missing);
  Bind(*lib, a.cuFuncGetAttribute, {"cuFuncGetAttribute"}, &missing);
  Bind(*lib, a.cuFuncSetAttribute, {"cuFuncSetAttribute"}, &missing);
  Bind(*lib, a.cuMemAlloc, {"cuMemAlloc_v2"}, &missing);
  Bind(*lib, a.cuMemFree, {"cuMemFree_v2"}, &missing);
  Bind(*lib, a.cuMemcpyHtoD, {"cuMemcpyHtoD_v2"}, &missing);
  Bind(*lib, a.cuMemcpyDtoH, {"cuMemcpyDtoH_v2"}, &missing);
  Bind(*lib, a.cuMemsetD32, {"cuMemsetD32_v2"}, &missing);
  Bind(*lib, a.cuMemsetD32Async, {"cuMemsetD32Async"}, &missing);
  Bind(*lib, a.cuLaunchKernel, {"cuLaunchKernel"}, &missing);
  Bind(*lib, a.cuEventCreate, {"cuEventCreate"}, &missing);
  Bind(*lib, a.cuEventDestroy, {"cuEventDestroy_v2", "cuEventDestroy"}, &missing);
  Bind(*lib, a.cuEventRecord, {"cuEventRecord"}, &missing);
  Bind(*lib, a.cuEventSynchronize, {"cuEventSynchronize"}, &missing);
  Bind(*lib, a.cuEventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, &missing);
  Bind(*lib, a.cuGetErrorName, {"cuGetErrorName"}, &missing);
  Bind(*lib, a.cuGetErrorString, {"cuGetErrorString"}, &missing);
  if (!missing.empty()) {
    *error = fmt::format("{} lacks {} (driver too old?)", lib->path(), missing);
    return nullptr;
  }
  if (CUresult r = a.cuInit(0); r != CUDA_SUCCESS) {
    *error = a.Error("cuInit", r);
    return nullptr;
  }
  a.cuDriverGetVersion(&d->version_);
  d->lib_ = std::move(lib);
  return d;
}

std::unique_ptr<Nvrtc> Nvrtc::Load(std::string* error) {
  auto lib = Library::Open(NvrtcCandidates(), error);
  if (!lib) {
    *error = "no NVRTC: " + *error;
    return nullptr;
  }
  auto n = std::unique_ptr<Nvrtc>(new Nvrtc());
  NvrtcApi& a = n->api_;
  std::string missing;
  Bind(*lib, a.nvrtcVersion, {"nvrtcVersion"}, &missing);
  Bind(*lib, a.nvrtcGetErrorString, {"nvrtcGetErrorString"}, &missing);
  Bind(*lib, a.nvrtcCreateProgram, {"nvrtcCreateProgram"}, &missing);
  Bind(*lib, a.nvrtcDestroyProgram, {"nvrtcDestroyProgram"}, &missing);
  Bind(*lib, a.nvrtcCompileProgram, {"nvrtcCompileProgram"}, &missing);
  Bind(*lib, a.nvrtcGetProgramLogSize, {"nvrtcGetProgramLogSize"}, &missing);
  Bind(*lib, a.nvrtcGetProgramLog, {"nvrtcGetProgramLog"}, &missing);
  Bind(*lib, a.nvrtcGetCUBINSize, {"nvrtcGetCUBINSize"}, &missing);
  Bind(*lib, a.nvrtcGetCUBIN, {"nvrtcGetCUBIN"}, &missing);
  Bind(*lib, a.nvrtcGetPTXSize, {"nvrtcGetPTXSize"}, &missing);
  Bind(*lib, a.nvrtcGetPTX, {"nvrtcGetPTX"}, &missing);
  Bind(*lib, a.nvrtcAddNameExpression, {"nvrtcAddNameExpression"}, &missing);
  Bind(*lib, a.nvrtcGetLoweredName, {"nvrtcGetLoweredName"}, &missing);
  Bind(*lib, a.nvrtcGetNumSupportedArchs, {"nvrtcGetNumSupportedArchs"}, &missing);
  Bind(*lib, a.nvrtcGetSupportedArchs, {"nvrtcGetSupportedArchs"}, &missing);
  if (!missing.empty()) {
    *error = fmt::format("{} lacks {} (NVRTC too old?)", lib->path(), missing);
    return nullptr;
  }
  n->lib_ = std::move(lib);
  return n;
}

std::string Nvrtc::version() const {
  int major = 0, minor = 0;
  api_.nvrtcVersion(&major, &minor);
  return fmt::format("{}.{}", major, minor);
}

std::vector<int> Nvrtc::supported_archs() const {
  int n = 0;
  if (api_.nvrtcGetNumSupportedArchs(&n) != 0 || n <= 0) return {};
  std::vector<int> archs(static_cast<size_t>(n));
  api_.nvrtcGetSupportedArchs(archs.data());
  return archs;
}

std::string CudaIncludeDir() {
  for (const char* root : std::initializer_list<const char*>{
           std::getenv("CUDA_PATH"), std::getenv("CUDA_HOME"), "/usr/local/cuda"}) {
    if (!root || !*root) continue;
    for (const char* sub : {"include", "targets/x86_64-linux/include"}) {
      std::string dir = fmt::format("{}/{}", root, sub);
      if (std::filesystem::exists(dir + "/cuda_fp16.h")) return dir;
    }
  }
  return "";
}

std::string NvrtcTarget(int arch) {
  const bool specific = arch == 90 || arch == 100;
  return fmt::format("sm_{}{}", arch, specific ? "a" : "");
}

NvrtcOutput CompileCuda(const Nvrtc& nvrtc, const std::string& source,
                        const std::vector<std::string>& entries,
                        const std::vector<std::pair<std::string, std::string>>& defines, int arch) {
  KF_IGNORE_FOREIGN_LEAKS;
  const NvrtcApi& a = nvrtc.api();
  NvrtcOutput out;
  nvrtcProgram prog = nullptr;
  if (nvrtcResult r =
          a.nvrtcCreateProgram(&prog, source.c_str(), "candidate.cu", 0, nullptr, nullptr);
      r != 0) {
    out.log = fmt::format("nvrtcCreateProgram failed: {}", a.nvrtcGetErrorString(r));
    return out;
  }
  std::vector<std::string> name_exprs;
  for (const std::string& entry : entries) {
    name_exprs.push_back("&" + entry);
    a.nvrtcAddNameExpression(prog, name_exprs.back().c_str());
  }
  std::vector<std::string> options = {"--gpu-architecture=" + NvrtcTarget(arch), "-std=c++17",
                                      "-lineinfo"};
  if (std::string inc = CudaIncludeDir(); !inc.empty()) options.push_back("-I" + inc);
  for (const auto& [k, v] : defines) options.push_back(fmt::format("-D{}={}", k, v));
  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  nvrtcResult r = a.nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  size_t log_size = 0;
  a.nvrtcGetProgramLogSize(prog, &log_size);
  if (log_size > 1) {
    out.log.resize(log_size);
    a.nvrtcGetProgramLog(prog, out.log.data());
    while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n'))
      out.log.pop_back();
  }
  if (r != 0) {
    if (out.log.empty())
      out.log = fmt::format("nvrtcCompileProgram failed: {}", a.nvrtcGetErrorString(r));
    a.nvrtcDestroyProgram(&prog);
    return out;
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    const char* lowered = nullptr;
    if (a.nvrtcGetLoweredName(prog, name_exprs[i].c_str(), &lowered) != 0 || !lowered) {
      out.log += fmt::format("{}entry point '{}' not found in the program",
                             out.log.empty() ? "" : "\n", entries[i]);
      a.nvrtcDestroyProgram(&prog);
      return out;
    }
    out.lowered_names.emplace_back(lowered);
  }
  size_t cubin_size = 0;
  a.nvrtcGetCUBINSize(prog, &cubin_size);
  out.cubin.resize(cubin_size);
  if (cubin_size) a.nvrtcGetCUBIN(prog, reinterpret_cast<char*>(out.cubin.data()));
  size_t ptx_size = 0;
  if (a.nvrtcGetPTXSize(prog, &ptx_size) == 0 && ptx_size > 1) {
    out.ptx.resize(ptx_size);
    a.nvrtcGetPTX(prog, out.ptx.data());
    out.ptx.pop_back();
  }
  a.nvrtcDestroyProgram(&prog);
  if (cubin_size == 0) {
    out.log += "\nNVRTC produced no cubin";
    return out;
  }
  out.ok = true;
  return out;
}

}  // namespace kf::cuda
