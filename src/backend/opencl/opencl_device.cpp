#include "backend/opencl/opencl_device.hpp"

#include <CL/cl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>

namespace kf {

namespace {

const char* ClErrorName(cl_int e) {
  switch (e) {
    case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
    case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
    case CL_COMPILER_NOT_AVAILABLE: return "CL_COMPILER_NOT_AVAILABLE";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
    case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
    case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
    case CL_INVALID_DEVICE: return "CL_INVALID_DEVICE";
    case CL_INVALID_BINARY: return "CL_INVALID_BINARY";
    case CL_INVALID_BUILD_OPTIONS: return "CL_INVALID_BUILD_OPTIONS";
    case CL_INVALID_PROGRAM: return "CL_INVALID_PROGRAM";
    case CL_INVALID_PROGRAM_EXECUTABLE: return "CL_INVALID_PROGRAM_EXECUTABLE";
    case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
    case CL_INVALID_KERNEL: return "CL_INVALID_KERNEL";
    case CL_INVALID_ARG_INDEX: return "CL_INVALID_ARG_INDEX";
    case CL_INVALID_ARG_VALUE: return "CL_INVALID_ARG_VALUE";
    case CL_INVALID_ARG_SIZE: return "CL_INVALID_ARG_SIZE";
    case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
    case CL_INVALID_WORK_DIMENSION: return "CL_INVALID_WORK_DIMENSION";
    case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
    case CL_INVALID_WORK_ITEM_SIZE: return "CL_INVALID_WORK_ITEM_SIZE";
    case CL_INVALID_GLOBAL_WORK_SIZE: return "CL_INVALID_GLOBAL_WORK_SIZE";
    case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
    case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
    case CL_INVALID_COMMAND_QUEUE: return "CL_INVALID_COMMAND_QUEUE";
    case CL_INVALID_CONTEXT: return "CL_INVALID_CONTEXT";
    case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST:
      return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "CL_ERROR";
  }
}

std::string ClError(const char* what, cl_int e) {
  return fmt::format("{} failed: {} ({})", what, ClErrorName(e), e);
}

std::string DeviceString(cl_device_id d, cl_device_info param) {
  size_t size = 0;
  if (clGetDeviceInfo(d, param, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string s(size, '\0');
  clGetDeviceInfo(d, param, size, s.data(), nullptr);
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

template <typename T>
T DeviceValue(cl_device_id d, cl_device_info param, T fallback) {
  T v{};
  // NOLINTNEXTLINE(bugprone-sizeof-expression): T may be a handle type, whose size is wanted
  cl_int e = clGetDeviceInfo(d, param, sizeof(T), &v, nullptr);
  return e == CL_SUCCESS ? v : fallback;
}

std::vector<cl_device_id> AllDevices(std::string* why) {
  cl_uint nplat = 0;
  cl_int e = clGetPlatformIDs(0, nullptr, &nplat);
  if (e != CL_SUCCESS || nplat == 0) {
    *why = e == CL_SUCCESS ? "no OpenCL platforms (install an ICD such as pocl-opencl-icd)"
                           : ClError("clGetPlatformIDs", e);
    return {};
  }
  std::vector<cl_platform_id> platforms(nplat);
  clGetPlatformIDs(nplat, platforms.data(), nullptr);
  std::vector<cl_device_id> devices;
  for (cl_platform_id p : platforms) {
    cl_uint n = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS || n == 0) continue;
    std::vector<cl_device_id> ds(n);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, ds.data(), nullptr);
    devices.insert(devices.end(), ds.begin(), ds.end());
  }
  if (devices.empty()) *why = "OpenCL platforms report no devices";
  return devices;
}

DeviceInfo Describe(cl_device_id d, int index) {
  DeviceInfo info;
  info.backend = "opencl";
  info.index = index;
  info.name = DeviceString(d, CL_DEVICE_NAME);
  info.vendor = DeviceString(d, CL_DEVICE_VENDOR);
  info.driver_version = DeviceString(d, CL_DRIVER_VERSION);
  info.arch = DeviceString(d, CL_DEVICE_OPENCL_C_VERSION);
  cl_platform_id platform = DeviceValue<cl_platform_id>(d, CL_DEVICE_PLATFORM, nullptr);
  size_t psize = 0;
  if (platform &&
      clGetPlatformInfo(platform, CL_PLATFORM_VERSION, 0, nullptr, &psize) == CL_SUCCESS) {
    std::string pv(psize, '\0');
    clGetPlatformInfo(platform, CL_PLATFORM_VERSION, psize, pv.data(), nullptr);
    while (!pv.empty() && pv.back() == '\0') pv.pop_back();
    info.compiler_version = pv;
  }
  auto type = DeviceValue<cl_device_type>(d, CL_DEVICE_TYPE, 0);
  info.device_class = (type & CL_DEVICE_TYPE_GPU)   ? DeviceClass::kGpu
                      : (type & CL_DEVICE_TYPE_CPU) ? DeviceClass::kCpu
                                                    : DeviceClass::kOther;
  info.compute_units = static_cast<int>(DeviceValue<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS, 0));
  info.max_work_group_size =
      static_cast<int64_t>(DeviceValue<size_t>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, 0));
  info.local_mem_bytes =
      static_cast<int64_t>(DeviceValue<cl_ulong>(d, CL_DEVICE_LOCAL_MEM_SIZE, 0));
  info.global_mem_bytes =
      static_cast<int64_t>(DeviceValue<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_SIZE, 0));
  info.cache_bytes =
      static_cast<int64_t>(DeviceValue<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, 0));
  // Sub-group width: vendor queries where they exist, else the native float vector width (CPUs).
  constexpr cl_device_info kWarpSizeNV = 0x4003, kWavefrontWidthAMD = 0x4043;
  std::string extensions = DeviceString(d, CL_DEVICE_EXTENSIONS);
  if (extensions.find("cl_nv_device_attribute_query") != std::string::npos) {
    info.sub_group_width = static_cast<int>(DeviceValue<cl_uint>(d, kWarpSizeNV, 32));
  } else if (extensions.find("cl_amd_device_attribute_query") != std::string::npos) {
    info.sub_group_width = static_cast<int>(DeviceValue<cl_uint>(d, kWavefrontWidthAMD, 64));
  } else if (info.device_class == DeviceClass::kGpu &&
             info.vendor.find("Intel") != std::string::npos) {
    info.sub_group_width = 16;
  } else {
    info.sub_group_width =
        static_cast<int>(DeviceValue<cl_uint>(d, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, 1));
  }
  return info;
}

constexpr const char* kFlushSource =
    "__kernel void kf_flush(__global int* p) { size_t i = get_global_id(0); p[i] = p[i] * 3 + 1; }";

class OpenCLKernel : public LoadedKernel {
 public:
  OpenCLKernel(cl_program p, cl_kernel k, cl_device_id d) : program_(p), kernel_(k), device_(d) {}
  KernelResources resources() const override {
    KernelResources r;
    cl_ulong local = 0;
    size_t group = 0;
    clGetKernelWorkGroupInfo(kernel_, device_, CL_KERNEL_LOCAL_MEM_SIZE, sizeof(local), &local,
                             nullptr);
    clGetKernelWorkGroupInfo(kernel_, device_, CL_KERNEL_WORK_GROUP_SIZE, sizeof(group), &group,
                             nullptr);
    r.static_local_bytes = static_cast<int64_t>(local);
    r.max_group_size = static_cast<int64_t>(group);
    return r;
  }
  ~OpenCLKernel() override {
    if (kernel_) clReleaseKernel(kernel_);
    if (program_) clReleaseProgram(program_);
  }
  cl_kernel kernel() const { return kernel_; }

 private:
  cl_program program_;
  cl_kernel kernel_;
  cl_device_id device_;
};

std::string BuildLog(cl_program program, cl_device_id device) {
  size_t size = 0;
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
  std::string log(size, '\0');
  if (size) clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

class OpenCLDevice : public Device {
 public:
  OpenCLDevice(cl_device_id device, DeviceInfo info, cl_context context, cl_command_queue queue)
      : device_(device), info_(std::move(info)), context_(context), queue_(queue) {}

  ~OpenCLDevice() override {
    flush_kernel_.reset();
    for (const std::vector<cl_event>& slot : slots_)
      for (cl_event e : slot)
        if (e) clReleaseEvent(e);
    for (auto& [h, mem] : buffers_) clReleaseMemObject(mem);
    clReleaseCommandQueue(queue_);
    clReleaseContext(context_);
  }

  const DeviceInfo& info() const override { return info_; }

  CompileResult Compile(const CompileRequest& request) override {
    CompileResult result;
    const char* text = request.source.c_str();
    size_t length = request.source.size();
    cl_int e = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(context_, 1, &text, &length, &e);
    if (e != CL_SUCCESS) {
      result.log = ClError("clCreateProgramWithSource", e);
      return result;
    }
    std::string options = "-cl-std=CL1.2";
    for (const auto& [k, v] : request.defines) options += fmt::format(" -D{}={}", k, v);
    e = clBuildProgram(program, 1, &device_, options.c_str(), nullptr, nullptr);
    result.log = BuildLog(program, device_);
    if (e != CL_SUCCESS) {
      if (result.log.empty()) result.log = ClError("clBuildProgram", e);
      clReleaseProgram(program);
      return result;
    }
    for (const std::string& entry : request.entries) {
      cl_kernel probe = clCreateKernel(program, entry.c_str(), &e);
      if (e != CL_SUCCESS) {
        result.log += fmt::format("{}entry point '{}' not found in the program ({})",
                                  result.log.empty() ? "" : "\n", entry, ClErrorName(e));
        clReleaseProgram(program);
        return result;
      }
      clReleaseKernel(probe);
    }
    size_t bin_size = 0;
    e = clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(size_t), &bin_size, nullptr);
    if (e == CL_SUCCESS && bin_size > 0) {
      result.artifact.binary.resize(bin_size);
      unsigned char* ptr = reinterpret_cast<unsigned char*>(result.artifact.binary.data());
      e = clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(ptr), &ptr, nullptr);
    }
    clReleaseProgram(program);
    if (e != CL_SUCCESS || bin_size == 0) {
      result.log += "\ncould not read the program binary: " + ClError("clGetProgramInfo", e);
      return result;
    }
    result.artifact.symbols = request.entries;
    result.ok = true;
    return result;
  }

  std::unique_ptr<LoadedKernel> Load(const Artifact& artifact, const std::string& symbol,
                                     std::string* error) override {
    const auto* bin = reinterpret_cast<const unsigned char*>(artifact.binary.data());
    size_t size = artifact.binary.size();
    cl_int status = CL_SUCCESS, e = CL_SUCCESS;
    cl_program program = clCreateProgramWithBinary(context_, 1, &device_, &size, &bin, &status, &e);
    if (e != CL_SUCCESS || status != CL_SUCCESS) {
      *error = ClError("clCreateProgramWithBinary", e != CL_SUCCESS ? e : status);
      if (program) clReleaseProgram(program);
      return nullptr;
    }
    e = clBuildProgram(program, 1, &device_, "", nullptr, nullptr);
    if (e != CL_SUCCESS) {
      *error = ClError("clBuildProgram (binary)", e) + "\n" + BuildLog(program, device_);
      clReleaseProgram(program);
      return nullptr;
    }
    cl_kernel kernel = clCreateKernel(program, symbol.c_str(), &e);
    if (e != CL_SUCCESS) {
      *error = ClError("clCreateKernel", e);
      clReleaseProgram(program);
      return nullptr;
    }
    return std::make_unique<OpenCLKernel>(program, kernel, device_);
  }

  DeviceStatus Alloc(size_t bytes, BufferHandle* out) override {
    cl_int e = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(context_, CL_MEM_READ_WRITE, bytes, nullptr, &e);
    if (e != CL_SUCCESS) return DeviceStatus::Fail(ClError("clCreateBuffer", e));
    *out = ++next_handle_;
    buffers_[*out] = mem;
    return DeviceStatus::Ok();
  }

  void Free(BufferHandle buffer) override {
    auto it = buffers_.find(buffer);
    if (it == buffers_.end()) return;
    clReleaseMemObject(it->second);
    buffers_.erase(it);
  }

  DeviceStatus Write(BufferHandle buffer, const void* src, size_t bytes) override {
    cl_int e =
        clEnqueueWriteBuffer(queue_, Mem(buffer), CL_TRUE, 0, bytes, src, 0, nullptr, nullptr);
    return e == CL_SUCCESS ? DeviceStatus::Ok()
                           : DeviceStatus::Fail(ClError("clEnqueueWriteBuffer", e));
  }

  DeviceStatus Read(BufferHandle buffer, void* dst, size_t bytes) override {
    cl_int e =
        clEnqueueReadBuffer(queue_, Mem(buffer), CL_TRUE, 0, bytes, dst, 0, nullptr, nullptr);
    return e == CL_SUCCESS ? DeviceStatus::Ok()
                           : DeviceStatus::Fail(ClError("clEnqueueReadBuffer", e));
  }

  DeviceStatus Fill(BufferHandle buffer, uint32_t pattern, size_t bytes) override {
    cl_int e = clEnqueueFillBuffer(queue_, Mem(buffer), &pattern, sizeof(pattern), 0,
                                   bytes & ~size_t{3}, 0, nullptr, nullptr);
    if (e == CL_SUCCESS) e = clFinish(queue_);
    return e == CL_SUCCESS ? DeviceStatus::Ok()
                           : DeviceStatus::Fail(ClError("clEnqueueFillBuffer", e));
  }

  LaunchResult Run(std::span<const LaunchStep> steps, std::span<const KernelArg> args) override {
    LaunchResult result;
    std::vector<cl_event> events;
    result.status = EnqueueSteps(steps, args, &events);
    if (!events.empty()) {
      cl_int e = clWaitForEvents(1, &events.back());
      for (size_t i = 0; i < events.size() && result.status.ok(); ++i) {
        cl_int exec = CL_COMPLETE;
        clGetEventInfo(events[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(exec), &exec, nullptr);
        if (e != CL_SUCCESS || exec < 0) {
          result.status = DeviceStatus::Fail(StepPrefix(i, steps.size()) +
                                             ClError("kernel execution", exec < 0 ? exec : e));
        }
      }
      if (result.status.ok()) result.elapsed_ms = EventMs(events.front(), events.back());
      if (!result.status.ok()) clFinish(queue_);  // nothing of it runs on after we return
    }
    for (cl_event e : events) clReleaseEvent(e);
    return result;
  }

  DeviceStatus View(BufferHandle parent, size_t offset, size_t bytes, BufferHandle* out) override {
    cl_buffer_region region{offset, std::max<size_t>(bytes, 1)};
    cl_int e = CL_SUCCESS;
    cl_mem view = clCreateSubBuffer(Mem(parent), CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION,
                                    &region, &e);
    if (e != CL_SUCCESS) return DeviceStatus::Fail(ClError("clCreateSubBuffer", e));
    *out = ++next_handle_;
    buffers_[*out] = view;
    return DeviceStatus::Ok();
  }

  size_t ViewAlignment() const override {
    cl_uint bits = 0;
    clGetDeviceInfo(device_, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof(bits), &bits, nullptr);
    return std::max<size_t>(bits / 8, 256);
  }

  DeviceStatus Enqueue(LoadedKernel& loaded, std::span<const KernelArg> args,
                       const Launch& launch) override {
    return LaunchAsync(loaded, args, launch, nullptr);
  }

  DeviceStatus EnqueueTimed(std::span<const LaunchStep> steps, std::span<const KernelArg> args,
                            int slot) override {
    if (slot < 0) return DeviceStatus::Fail("EnqueueTimed: negative slot");
    if (static_cast<int>(slots_.size()) <= slot) slots_.resize(static_cast<size_t>(slot) + 1);
    std::vector<cl_event>& events = slots_[static_cast<size_t>(slot)];
    for (cl_event e : events) clReleaseEvent(e);
    events.clear();
    return EnqueueSteps(steps, args, &events);
  }

  DeviceStatus ElapsedMs(int slot, double* ms) override {
    if (slot < 0 || slot >= static_cast<int>(slots_.size()) ||
        slots_[static_cast<size_t>(slot)].empty())
      return DeviceStatus::Fail("ElapsedMs: no such slot");
    const std::vector<cl_event>& events = slots_[static_cast<size_t>(slot)];
    for (size_t i = 0; i < events.size(); ++i) {
      cl_int exec = CL_COMPLETE;
      clGetEventInfo(events[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(exec), &exec, nullptr);
      if (exec < 0)
        return DeviceStatus::Fail(StepPrefix(i, events.size()) + ClError("kernel execution", exec));
    }
    *ms = EventMs(events.front(), events.back());
    return DeviceStatus::Ok();
  }

  DeviceStatus EnqueueFlushCache() override {
    if (DeviceStatus s = EnsureFlushKernel(); !s.ok()) return s;
    KernelArg arg{KernelArg::Kind::kBuffer, scratch_};
    return Enqueue(*flush_kernel_, std::span<const KernelArg>(&arg, 1),
                   Launch{{static_cast<int64_t>(flush_words_ / 256)}, {256}});
  }

  DeviceStatus Synchronize() override {
    cl_int e = clFinish(queue_);
    return e == CL_SUCCESS ? DeviceStatus::Ok() : DeviceStatus::Fail(ClError("clFinish", e));
  }

 private:
  // From the start of `first` to the end of `last` (the same event for a single launch).
  static double EventMs(cl_event first, cl_event last) {
    cl_ulong start = 0, end = 0;
    clGetEventProfilingInfo(first, CL_PROFILING_COMMAND_START, sizeof(start), &start, nullptr);
    clGetEventProfilingInfo(last, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr);
    return static_cast<double>(end - start) * 1e-6;
  }

  // Enqueues the steps in order, each with its event appended to `events`.
  DeviceStatus EnqueueSteps(std::span<const LaunchStep> steps, std::span<const KernelArg> args,
                            std::vector<cl_event>* events) {
    for (size_t i = 0; i < steps.size(); ++i) {
      cl_event event = nullptr;
      DeviceStatus s = LaunchAsync(*steps[i].kernel, args, steps[i].launch, &event);
      if (!s.ok()) return DeviceStatus::Fail(StepPrefix(i, steps.size()) + s.message());
      events->push_back(event);
    }
    return DeviceStatus::Ok();
  }

  DeviceStatus LaunchAsync(LoadedKernel& loaded, std::span<const KernelArg> args,
                           const Launch& launch, cl_event* event) {
    if (launch.shared_bytes > 0) {
      return DeviceStatus::Fail(
          "dynamic shared memory (@shared) is CUDA only; OpenCL kernels size __local arrays at "
          "compile time");
    }
    cl_kernel kernel = static_cast<OpenCLKernel&>(loaded).kernel();
    for (size_t i = 0; i < args.size(); ++i) {
      const KernelArg& a = args[i];
      cl_int e = CL_SUCCESS;
      cl_mem mem = nullptr;
      switch (a.kind) {
        case KernelArg::Kind::kBuffer:
          mem = Mem(a.buffer);
          e = clSetKernelArg(kernel, static_cast<cl_uint>(i), sizeof(cl_mem), &mem);
          break;
        case KernelArg::Kind::kI32:
          e = clSetKernelArg(kernel, static_cast<cl_uint>(i), 4, &a.i32);
          break;
        case KernelArg::Kind::kI64:
          e = clSetKernelArg(kernel, static_cast<cl_uint>(i), 8, &a.i64);
          break;
        case KernelArg::Kind::kF32:
          e = clSetKernelArg(kernel, static_cast<cl_uint>(i), 4, &a.f32);
          break;
        case KernelArg::Kind::kF64:
          e = clSetKernelArg(kernel, static_cast<cl_uint>(i), 8, &a.f64);
          break;
      }
      if (e != CL_SUCCESS)
        return DeviceStatus::Fail(ClError(fmt::format("clSetKernelArg({})", i).c_str(), e));
    }
    size_t global[3] = {1, 1, 1}, local[3] = {1, 1, 1};
    for (size_t d = 0; d < launch.grid.size(); ++d) {
      local[d] = static_cast<size_t>(launch.block[d]);
      global[d] = static_cast<size_t>(launch.grid[d] * launch.block[d]);
    }
    cl_int e = clEnqueueNDRangeKernel(queue_, kernel, static_cast<cl_uint>(launch.grid.size()),
                                      nullptr, global, local, 0, nullptr, event);
    if (e != CL_SUCCESS) return DeviceStatus::Fail(ClError("clEnqueueNDRangeKernel", e));
    return DeviceStatus::Ok();
  }

  DeviceStatus EnsureFlushKernel() {
    if (flush_kernel_) return DeviceStatus::Ok();
    flush_words_ = static_cast<size_t>(std::max<int64_t>(2 * info_.cache_bytes, 8 << 20)) / 4;
    flush_words_ = (flush_words_ + 255) / 256 * 256;
    CompileResult c = Compile({kFlushSource, {"kf_flush"}, {}});
    if (!c.ok) return DeviceStatus::Fail("cache-flush kernel: " + c.log);
    std::string error;
    flush_kernel_ = Load(c.artifact, c.artifact.symbols.front(), &error);
    if (!flush_kernel_) return DeviceStatus::Fail("cache-flush kernel: " + error);
    if (DeviceStatus s = Alloc(flush_words_ * 4, &scratch_); !s.ok()) return s;
    return Fill(scratch_, 0, flush_words_ * 4);
  }

 public:
  DeviceStatus HealthCheck() override {
    cl_int e = clFinish(queue_);
    if (e != CL_SUCCESS) return DeviceStatus::Fail(ClError("clFinish", e));
    return RoundTripProbe(*this, &probe_);
  }

  // A read-modify-write kernel over twice the cache: a fill may use non-temporal stores on CPU
  // drivers (glibc memset does for large sizes) and then evicts nothing.
  DeviceStatus FlushCache() override {
    DeviceStatus s = EnqueueFlushCache();
    return s.ok() ? Synchronize() : s;
  }

 private:
  cl_mem Mem(BufferHandle h) const {
    auto it = buffers_.find(h);
    return it == buffers_.end() ? nullptr : it->second;
  }

  cl_device_id device_;
  DeviceInfo info_;
  cl_context context_;
  cl_command_queue queue_;
  std::map<BufferHandle, cl_mem> buffers_;
  BufferHandle next_handle_ = 0;
  BufferHandle probe_ = 0;  // the health check's buffer
  std::unique_ptr<LoadedKernel> flush_kernel_;
  BufferHandle scratch_ = 0;
  size_t flush_words_ = 0;
  std::vector<std::vector<cl_event>> slots_;  // the events of each timed slot, one per step
};

class OpenCLBackend : public Backend {
 public:
  std::string_view name() const override { return "opencl"; }

  std::vector<DeviceInfo> Enumerate(std::string* why_none) override {
    std::vector<DeviceInfo> out;
    auto devices = AllDevices(why_none);
    for (size_t i = 0; i < devices.size(); ++i)
      out.push_back(Describe(devices[i], static_cast<int>(i)));
    return out;
  }

  std::unique_ptr<Device> Open(int index, std::string* error) override {
    auto devices = AllDevices(error);
    if (index < 0 || static_cast<size_t>(index) >= devices.size()) {
      *error = fmt::format("no OpenCL device {}", index);
      return nullptr;
    }
    cl_device_id d = devices[static_cast<size_t>(index)];
    cl_int e = CL_SUCCESS;
    cl_context context = clCreateContext(nullptr, 1, &d, nullptr, nullptr, &e);
    if (e != CL_SUCCESS) {
      *error = ClError("clCreateContext", e);
      return nullptr;
    }
    cl_command_queue queue = clCreateCommandQueue(context, d, CL_QUEUE_PROFILING_ENABLE, &e);
    if (e != CL_SUCCESS) {
      *error = ClError("clCreateCommandQueue", e);
      clReleaseContext(context);
      return nullptr;
    }
    return std::make_unique<OpenCLDevice>(d, Describe(d, index), context, queue);
  }
};

}  // namespace

std::unique_ptr<Backend> MakeOpenCLBackend() {
  return std::make_unique<OpenCLBackend>();
}

}  // namespace kf
