#include "torch/torch_reference.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/dtype.hpp"
#include "core/input_error.hpp"
#include "torch/python_process.hpp"

namespace kf {

namespace fs = std::filesystem;

namespace {

constexpr double kDefaultTimeoutS = 300;

// `name` as execv takes it: a path as given, a bare name looked up on PATH ("" if not found).
std::string OnPath(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = (end > start ? dirs.substr(start, end - start) : ".") + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

// The set's sizes as the problem's integer constants.
nlohmann::json IntegerSizes(const SizeSet& set) {
  nlohmann::json sizes = nlohmann::json::object();
  for (const auto& [name, value] : set.sizes) sizes[name] = static_cast<int64_t>(value);
  return sizes;
}

// In shared memory (/dev/shm, a tmpfs) where the machine has it, so the tensors never reach a
// disk; else under $TMPDIR or /tmp.
std::string MakePrivateDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : tmp && *tmp ? tmp : "/tmp";
  std::string pattern = base + "/kf-torch-XXXXXX";
  if (!mkdtemp(pattern.data()))  // mode 0700
    throw std::runtime_error(
        fmt::format("cannot create a private folder for the PyTorch "
                    "reference's tensors ({}): {}",
                    pattern, std::strerror(errno)));
  return pattern;
}

}  // namespace

TorchReference::TorchReference(const Task& task, const DeviceInfo& device, double timeout_s)
    : task_(task),
      problem_(task.PathOf(task.torch_reference)),
      device_(device.backend == "cuda" ? "cuda" : "cpu"),
      allow_tf32_(task.precision == "tf32"),
      timeout_s_(timeout_s),
      dir_(MakePrivateDir()) {
  try {
    Start();
  } catch (...) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
    throw;
  }
}

TorchReference::~TorchReference() {
  process_.reset();
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

void TorchReference::Start() {
  std::vector<std::string> pythons;
  if (const char* env = std::getenv("KF_PYTHON"); env && *env) {
    pythons = {OnPath(env)};
  } else {  // python3 on PATH, then Debian's where the first has no PyTorch
    pythons = {OnPath("python3")};
    std::error_code ec;
    if (pythons.front() != "/usr/bin/python3" && fs::exists("/usr/bin/python3", ec))
      pythons.push_back("/usr/bin/python3");
  }
  const std::string helper = TorchHelpersDir() + "/kb_reference.py";
  std::string why;
  for (const std::string& python : pythons) {
    if (python.empty()) continue;
    std::vector<std::string> argv = {python, helper, "--serve", std::to_string(getpid()), device_};
    if (allow_tf32_) argv.push_back("--allow-tf32");
    auto process = std::make_unique<WorkerProcess>();
    try {
      nlohmann::json ready = process->Start(argv, timeout_s_);
      label_ = ready.value("device", device_);
      process_ = std::move(process);
      return;
    } catch (const WorkerError& e) {
      why += fmt::format("{}{}: {}", why.empty() ? "" : "; ", python, e.what());
      if (e.exit_code() != kPythonNoTorch) break;  // PyTorch is there, and failed: say so
    }
  }
  throw WorkerError(
      fmt::format("{}: the PyTorch reference process does not start ({}); it needs python3 with "
                  "PyTorch (Debian: python3-torch), or $KF_PYTHON naming one",
                  problem_, why.empty() ? "no python3 found" : why),
      3);
}

nlohmann::json TorchReference::WriteArgs(const SizeSet& set, const std::vector<HostBuffer>& args,
                                         bool with_outputs) {
  const Env env = SizesEnv(set.sizes);
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < task_.args.size(); ++i) {
    const ArgSpec& a = task_.args[i];
    if (!a.is_buffer) continue;
    nlohmann::json shape = nlohmann::json::array();
    for (const Expr& d : a.shape) shape.push_back(static_cast<int64_t>(d.Eval(env)));
    const bool input = a.role != ArgRole::kOut;
    nlohmann::json j = {{"name", a.name},
                        {"role", input ? "in" : "out"},
                        {"dtype", std::string(DTypeName(a.dtype))},
                        {"shape", shape}};
    if (input || with_outputs) j["file"] = fmt::format("{}/arg{}.bin", dir_, i);
    if (input) {
      const HostBuffer& h = args.at(i);
      std::ofstream out(j["file"].get<std::string>(), std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(h.bytes.data()),
                static_cast<std::streamsize>(h.bytes.size()));
      if (!out) throw std::runtime_error("cannot write " + j["file"].get<std::string>());
    }
    list.push_back(std::move(j));
  }
  return list;
}

void TorchReference::RemoveFiles() {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, ec)) fs::remove(e.path(), ec);
}

nlohmann::json TorchReference::Ask(nlohmann::json request, const std::string& what) {
  if (!process_ || !process_->running()) Start();  // after a failure, a fresh process
  const int id = ++next_id_;
  request["id"] = id;
  request["problem"] = problem_;
  auto failed = [&](const std::string& why) {
    process_.reset();
    RemoveFiles();
    return InputError(problem_, 0, "torch reference", fmt::format("{}: {}", what, why));
  };
  if (!process_->Send(request))
    throw failed(process_->DescribeExit("the PyTorch reference process"));
  for (;;) {
    nlohmann::json answer;
    WorkerProcess::ReadResult r = process_->Read(DeadlineIn(timeout_s_), &answer);
    if (r == WorkerProcess::ReadResult::kTimeout) {
      throw failed(
          fmt::format("no answer within {:.0f} s ($KF_TORCH_TIMEOUT): the module hangs "
                      "or is far too slow; its process was killed",
                      timeout_s_));
    }
    if (r == WorkerProcess::ReadResult::kEof) {
      std::string exit = process_->DescribeExit("the PyTorch reference process");
      throw failed(exit + (exit.find("SIGKILL") != std::string::npos
                               ? " (out of memory? the kernel's OOM killer sends SIGKILL)"
                               : ""));
    }
    if (answer.value("id", -1) != id) continue;
    if (answer.contains("error")) throw failed(answer["error"].get<std::string>());
    return answer;
  }
}

std::vector<HostBuffer> TorchReference::Outputs(const SizeSet& set,
                                                const std::vector<HostBuffer>& args) {
  nlohmann::json list = WriteArgs(set, args, true);
  const std::string what = fmt::format("at size set '{}'", set.name);
  Ask({{"op", "run"}, {"sizes", IntegerSizes(set)}, {"args", list}}, what);
  std::vector<HostBuffer> out(task_.args.size());
  const Env env = SizesEnv(set.sizes);
  for (size_t i = 0, k = 0; i < task_.args.size(); ++i) {
    const ArgSpec& a = task_.args[i];
    if (!a.is_buffer) continue;
    const nlohmann::json& j = list[k++];
    if (a.role == ArgRole::kIn) continue;
    HostBuffer& h = out[i];
    h.dtype = a.dtype;
    h.count = static_cast<size_t>(ElementCount(a, env));
    std::ifstream in(j["file"].get<std::string>(), std::ios::binary);
    const std::string data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    h.bytes.resize(data.size());
    std::memcpy(h.bytes.data(), data.data(), data.size());
    if (h.bytes.size() != h.count * DTypeSize(a.dtype)) {
      RemoveFiles();
      throw InputError(problem_, 0, "torch reference",
                       fmt::format("{}: output '{}' came back with {} bytes, not {}", what, a.name,
                                   h.bytes.size(), h.count * DTypeSize(a.dtype)));
    }
  }
  RemoveFiles();  // nothing of this seed's tensors outlives the call
  return out;
}

std::vector<BaselineRuns> TorchReference::TimeBaselines(const SizeSet& set,
                                                        const std::vector<HostBuffer>& args,
                                                        const EvalSettings& settings,
                                                        int64_t flush_bytes, bool eager_only) {
  nlohmann::json list = WriteArgs(set, args, false);
  nlohmann::json answer = Ask({{"op", "time"},
                               {"sizes", IntegerSizes(set)},
                               {"args", list},
                               {"flush_bytes", flush_bytes},
                               {"eager_only", eager_only},
                               {"settings",
                                {{"warmup_runs", settings.warmup_runs},
                                 {"min_runs", settings.min_runs},
                                 {"max_runs", settings.max_runs},
                                 {"min_timed_ms", settings.min_timed_ms},
                                 {"max_timing_ms", settings.max_timing_ms}}}},
                              fmt::format("timing PyTorch at size set '{}'", set.name));
  RemoveFiles();
  std::vector<BaselineRuns> out;
  for (const nlohmann::json& b : answer.value("baselines", nlohmann::json::array())) {
    BaselineRuns r;
    r.name = b.value("name", "");
    r.device = label_;
    r.times_ms = b.value("times_ms", std::vector<double>{});
    r.unavailable = b.value("unavailable", r.times_ms.empty() && !b.contains("unavailable")
                                               ? std::string("no timed run")
                                               : std::string());
    out.push_back(std::move(r));
  }
  return out;
}

ReferenceSourceFactory TorchReferenceFactory() {
  return [](const Task& task, const DeviceInfo& device) -> std::unique_ptr<ReferenceSource> {
    double timeout_s = kDefaultTimeoutS;
    if (const char* env = std::getenv("KF_TORCH_TIMEOUT"); env && *env) {
      char* end = nullptr;
      double v = std::strtod(env, &end);
      if (end && *end == '\0' && v > 0) timeout_s = v;
    }
    return std::make_unique<TorchReference>(task, device, timeout_s);
  };
}

}  // namespace kf
