#pragma once
// The CUDA driver API and NVRTC, loaded at run time with dlopen so one binary runs on machines with
// and without an NVIDIA driver. Only the handful of types and entry points we call are declared
// here, so the backend builds without the CUDA toolkit. Each table is owned by one object whose
// destructor closes the library.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace kf::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;

constexpr CUresult CUDA_SUCCESS = 0;
// Device attributes (values from cuda.h).
constexpr int kAttrMaxThreadsPerBlock = 1;
constexpr int kAttrMaxSharedMemoryPerBlock = 8;
constexpr int kAttrWarpSize = 10;
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrMemoryClockRate = 36;       // kHz
constexpr int kAttrGlobalMemoryBusWidth = 37;  // bits
constexpr int kAttrL2CacheSize = 38;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kAttrMaxSharedMemoryPerBlockOptin = 97;
// Function attributes.
constexpr int kFuncMaxThreadsPerBlock = 0;
constexpr int kFuncSharedSizeBytes = 1;
constexpr int kFuncMaxDynamicSharedSizeBytes = 8;

struct DriverApi {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuFuncGetAttribute)(int*, int, CUfunction);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
  CUresult (*cuMemsetD32)(CUdeviceptr, unsigned, size_t);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void**, void**);
  CUresult (*cuEventCreate)(CUevent*, unsigned);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuGetErrorString)(CUresult, const char**);

  // "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"
  std::string Error(const char* what, CUresult r) const;
};

using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;

struct NvrtcApi {
  nvrtcResult (*nvrtcVersion)(int*, int*);
  const char* (*nvrtcGetErrorString)(nvrtcResult);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram*, const char*, const char*, int,
                                    const char* const*, const char* const*);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram*);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetPTX)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcAddNameExpression)(nvrtcProgram, const char*);
  nvrtcResult (*nvrtcGetLoweredName)(nvrtcProgram, const char*, const char**);
  nvrtcResult (*nvrtcGetNumSupportedArchs)(int*);
  nvrtcResult (*nvrtcGetSupportedArchs)(int*);
};

// One dlopen'ed library; closes it on destruction.
class Library {
 public:
  // Tries each name in turn; on failure `error` says what was tried.
  static std::unique_ptr<Library> Open(const std::vector<std::string>& names, std::string* error);
  ~Library();
  void* Symbol(const char* name) const;
  const std::string& path() const { return path_; }

 private:
  Library(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  void* handle_;
  std::string path_;
};

class Driver {
 public:
  // Loads libcuda and calls cuInit; null with `error` set when there is no usable driver.
  static std::unique_ptr<Driver> Load(std::string* error);
  const DriverApi& api() const { return api_; }
  int version() const { return version_; }

 private:
  std::unique_ptr<Library> lib_;
  DriverApi api_{};
  int version_ = 0;
};

class Nvrtc {
 public:
  static std::unique_ptr<Nvrtc> Load(std::string* error);
  const NvrtcApi& api() const { return api_; }
  std::string version() const;  // "13.0"
  std::vector<int> supported_archs() const;
  const std::string& path() const { return lib_->path(); }

 private:
  std::unique_ptr<Library> lib_;
  NvrtcApi api_{};
};

// The directory holding cuda_fp16.h and friends for NVRTC's -I, or "" when none is found.
std::string CudaIncludeDir();

struct NvrtcOutput {
  bool ok = false;
  std::vector<std::byte> cubin;
  std::string ptx;
  std::vector<std::string> lowered_names;  // one per entry point, in order
  std::string log;
};

// NVRTC's --gpu-architecture for a device of compute capability `arch` (90 for 9.0): the
// architecture-specific target (sm_90a, sm_100a) where there is one, since wgmma, setmaxnreg and
// tcgen05 exist only there and its cubin runs on exactly that compute capability; else sm_XX.
std::string NvrtcTarget(int arch);

// Compiles CUDA C++ to a cubin for a device of compute capability `arch` (e.g. 90 for 9.0, built
// for NvrtcTarget(90) = sm_90a). Needs no GPU.
NvrtcOutput CompileCuda(const Nvrtc& nvrtc, const std::string& source,
                        const std::vector<std::string>& entries,
                        const std::vector<std::pair<std::string, std::string>>& defines, int arch);

}  // namespace kf::cuda
