#include "eval/workspace.hpp"

#include <fmt/format.h>

#include <cstring>

namespace kf {

void Must(const DeviceStatus& s, const char* what) {
  if (!s.ok()) throw ToolError(fmt::format("{}: {}", what, s.message()));
}

KernelArg ScalarArg(const ArgSpec& a, const Env& env) {
  KernelArg arg{};
  double v = a.value.Eval(env);
  switch (a.dtype) {
    case DType::kI64:
      arg.kind = KernelArg::Kind::kI64;
      arg.i64 = static_cast<int64_t>(v);
      break;
    case DType::kF32:
      arg.kind = KernelArg::Kind::kF32;
      arg.f32 = static_cast<float>(v);
      break;
    case DType::kF64:
      arg.kind = KernelArg::Kind::kF64;
      arg.f64 = v;
      break;
    default:
      arg.kind = KernelArg::Kind::kI32;
      arg.i32 = static_cast<int32_t>(v);
      break;
  }
  return arg;
}

Workspace MakeWorkspace(Device& device, const Task& task, const Sizes& sizes, uint64_t seed) {
  Workspace ws;
  ws.env = SizesEnv(sizes);
  for (size_t i = 0; i < task.args.size(); ++i) {
    const ArgSpec& a = task.args[i];
    if (!a.is_buffer) {
      ws.args.push_back(ScalarArg(a, ws.env));
      ws.host.emplace_back();
      ws.device.emplace_back();
      ws.input_sums.push_back(0);
      continue;
    }
    HostBuffer h;
    if (a.role == ArgRole::kOut) {
      h.dtype = a.dtype;
      h.count = static_cast<size_t>(ElementCount(a, ws.env));
      h.bytes.resize(h.count * DTypeSize(a.dtype));
    } else {
      h = GenerateInput(a, ws.env, seed + 7919 * i);
    }
    BufferHandle handle = 0;
    size_t bytes = std::max<size_t>(h.bytes.size(), 4);
    Must(device.Alloc(bytes, &handle), "allocating a buffer");
    ws.device.emplace_back(&device, handle, bytes);
    ws.input_sums.push_back(a.role == ArgRole::kOut ? 0 : Checksum(h.bytes));
    ws.host.push_back(std::move(h));
    KernelArg arg{};
    arg.kind = KernelArg::Kind::kBuffer;
    arg.buffer = handle;
    ws.args.push_back(arg);
  }
  return ws;
}

// Draws fresh inputs into an existing workspace (same device buffers).
void RefillInputs(const Task& task, Workspace& ws, uint64_t seed) {
  for (size_t i = 0; i < task.args.size(); ++i) {
    const ArgSpec& a = task.args[i];
    if (!a.is_buffer || a.role == ArgRole::kOut) continue;
    ws.host[i] = GenerateInput(a, ws.env, seed + 7919 * i);
    ws.input_sums[i] = Checksum(ws.host[i].bytes);
  }
}

// Elements of the outputs that differ bit for bit between two launches.
int64_t DifferingElements(const Task& task, const std::vector<HostBuffer>& a,
                          const std::vector<HostBuffer>& b) {
  int64_t n = 0;
  for (size_t i = 0; i < task.args.size(); ++i) {
    if (a[i].bytes.empty()) continue;
    size_t size = DTypeSize(a[i].dtype);
    for (size_t e = 0; e < a[i].count; ++e) {
      n += std::memcmp(a[i].bytes.data() + e * size, b[i].bytes.data() + e * size, size) != 0;
    }
  }
  return n;
}

// Uploads inputs (pristine) and poisons outputs.
void PrepareLaunch(Device& device, const Task& task, Workspace& ws, bool upload_inputs) {
  for (size_t i = 0; i < task.args.size(); ++i) {
    const ArgSpec& a = task.args[i];
    if (!a.is_buffer) continue;
    if (a.role == ArgRole::kOut) {
      Must(device.Fill(ws.device[i].handle(), PoisonPattern(a.dtype), ws.device[i].bytes()),
           "poisoning an output");
    } else if (upload_inputs || a.role == ArgRole::kInOut) {
      Must(device.Write(ws.device[i].handle(), ws.host[i].bytes.data(), ws.host[i].bytes.size()),
           "uploading an input");
    }
  }
}

std::vector<HostBuffer> ReadOutputs(Device& device, const Task& task, const Workspace& ws) {
  std::vector<HostBuffer> out(task.args.size());
  for (size_t i = 0; i < task.args.size(); ++i) {
    const ArgSpec& a = task.args[i];
    if (!a.is_buffer || a.role == ArgRole::kIn) continue;
    out[i].dtype = a.dtype;
    out[i].count = ws.host[i].count;
    out[i].bytes.resize(ws.host[i].bytes.size());
    Must(device.Read(ws.device[i].handle(), out[i].bytes.data(), out[i].bytes.size()),
         "reading an output");
  }
  return out;
}

// Names the first input the launch changed, or "".
std::string ModifiedInput(Device& device, const Task& task, const Workspace& ws) {
  for (size_t i = 0; i < task.args.size(); ++i) {
    const ArgSpec& a = task.args[i];
    if (!a.is_buffer || a.role != ArgRole::kIn) continue;
    std::vector<std::byte> now(ws.host[i].bytes.size());
    Must(device.Read(ws.device[i].handle(), now.data(), now.size()), "reading an input back");
    if (Checksum(now) != ws.input_sums[i]) return a.name;
  }
  return "";
}

Launch MakeLaunch(const LaunchRule& k, const Config& config, const Env& sizes) {
  Env env = sizes;
  BindConfig(config, env);
  Launch l;
  for (const Expr& e : k.grid) l.grid.push_back(e.EvalInt(env));
  for (const Expr& e : k.block) l.block.push_back(e.EvalInt(env));
  for (size_t d = 0; d < l.grid.size(); ++d) {
    if (l.grid[d] <= 0 || l.block[d] <= 0) {
      throw ExprError(
          fmt::format("launch dimension {} is {}x{}, not positive", d, l.grid[d], l.block[d]), 0);
    }
  }
  if (k.shared) {
    l.shared_bytes = k.shared->EvalInt(env);
    if (l.shared_bytes < 0) {
      throw ExprError(
          fmt::format("@shared asks for {} bytes of dynamic shared memory", l.shared_bytes), 0);
    }
  }
  return l;
}

LoadedKernels LoadKernels(Device& device, const Artifact& artifact, std::string* error) {
  LoadedKernels loaded;
  for (const std::string& symbol : artifact.symbols) {
    std::unique_ptr<LoadedKernel> k = device.Load(artifact, symbol, error);
    if (!k) return {};
    loaded.push_back(std::move(k));
  }
  if (loaded.empty()) *error = "the compiled module names no entry point";
  return loaded;
}

std::vector<LaunchStep> MakeSteps(const Kernel& kernel, const LoadedKernels& loaded,
                                  const Config& config, const Env& sizes) {
  std::vector<LaunchStep> steps;
  for (size_t i = 0; i < kernel.launches.size(); ++i) {
    const LaunchRule& rule = kernel.launches[i];
    try {
      steps.push_back({loaded.at(i).get(), MakeLaunch(rule, config, sizes)});
    } catch (const ExprError& e) {
      if (kernel.launches.size() == 1) throw;
      throw ExprError(fmt::format("launch {} of {} ({}): {}", i + 1, kernel.launches.size(),
                                  rule.entry, e.what()),
                      0);
    }
  }
  return steps;
}

std::vector<int64_t> ScratchCounts(const Kernel& kernel, const Config& config, const Env& sizes) {
  Env env = sizes;
  BindConfig(config, env);
  std::vector<int64_t> counts;
  for (const ScratchSpec& s : kernel.scratch) {
    counts.push_back(s.count.EvalInt(env));
    if (counts.back() < 0)
      throw ExprError(fmt::format("@scratch {} has {} elements", s.name, counts.back()), 0);
  }
  return counts;
}

}  // namespace kf
