#include "eval/executor_main.hpp"

#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <memory>

#include "backend/registry.hpp"
#include "core/codec.hpp"
#include "core/input_error.hpp"
#include "core/task.hpp"
#include "core/worker_error.hpp"
#include "eval/evaluator.hpp"
#include "eval/protocol.hpp"

namespace kf {

ExecutorOptions Aimed(ExecutorOptions options, std::string binary, std::string task_dir,
                      std::string device, std::string sizes) {
  options.binary = std::move(binary);
  options.task = std::move(task_dir);
  options.device = std::move(device);
  options.sizes = std::move(sizes);
  return options;
}

namespace {

class PhaseReporter : public EvalObserver {
 public:
  explicit PhaseReporter(int fd) : fd_(fd) {}
  void Phase(EvalPhase p, int launches, const EvalPlace& place, double compiling_s) override {
    place_ = place;
    SendMessage(fd_, PhaseMessage(p, launches, place, compiling_s));
  }
  const EvalPlace& place() const { return place_; }

 private:
  int fd_;
  EvalPlace place_;  // the last one reported
};

}  // namespace

nlohmann::json PhaseMessage(EvalPhase phase, int launches, const EvalPlace& place,
                            double compiling_s) {
  const char* name = phase == EvalPhase::kCompile  ? "compile"
                     : phase == EvalPhase::kLaunch ? "launch"
                                                   : "host";
  nlohmann::json m = {{"phase", name}, {"step", place.step}};
  if (launches > 1) m["launches"] = launches;
  if (!place.sizes.empty()) m["sizes"] = place.sizes;
  if (place.seed) m["seed"] = *place.seed;
  if (!place.launch.empty()) m["launch"] = place.launch;
  if (compiling_s > 0) m["compiling_s"] = compiling_s;
  return m;
}

EvalPlace PlaceFromMessage(const nlohmann::json& m) {
  EvalPlace place;
  place.step = m.value("step", "");
  place.sizes = m.value("sizes", "");
  if (m.contains("seed") && m["seed"].is_number_unsigned()) place.seed = m["seed"].get<uint64_t>();
  place.launch = m.value("launch", "");
  return place;
}

bool BecomeWorker(pid_t parent, double address_space_gib, double cpu_seconds) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the parent
  if (parent > 0 && getppid() != parent) return false;
  dup2(2, 1);  // kernels' printf and driver chatter must not reach the reply channel
  signal(SIGPIPE, SIG_IGN);
  if (address_space_gib > 0) {
    rlim_t bytes = static_cast<rlim_t>(address_space_gib * (1ull << 30));
    rlimit r{bytes, bytes};
    setrlimit(RLIMIT_AS, &r);
  }
  if (cpu_seconds > 0) {
    rlimit r{static_cast<rlim_t>(cpu_seconds), static_cast<rlim_t>(cpu_seconds) + 5};
    setrlimit(RLIMIT_CPU, &r);
  }
  return true;
}

int RunExecutor(const ExecutorArgs& args) {
  ExecutorOptions o = args.options;
  if (!BecomeWorker(args.parent, o.address_space_gib, o.cpu_seconds)) return 1;
  const int out = args.out_fd;
  auto fatal = [&](const std::string& message, int code) {
    SendMessage(out, {{"fatal", message}, {"exit_code", code}});
    return code;
  };
  std::unique_ptr<Device> device;
  std::unique_ptr<Task> task;
  std::unique_ptr<CompileCache> cache;
  std::unique_ptr<Evaluator> evaluator;
  PhaseReporter reporter(out);
  double baseline_ms = args.baseline_ms;
  try {
    if (!args.settings_json.empty())
      o.settings = EvalSettingsFromJson(nlohmann::json::parse(args.settings_json));
    task = std::make_unique<Task>(LoadTask(o.task));
    auto backends = MakeBackends();
    std::string error;
    device = OpenDevice(backends, o.device, &error);
    if (!device) return fatal(error, 3);
    cache = std::make_unique<CompileCache>(DefaultCacheDir());
    EvalOptions eo;
    eo.bench_sizes = o.sizes;
    eo.settings = o.settings;
    eo.observer = &reporter;
    eo.reference_source = args.reference_source;
    evaluator = std::make_unique<Evaluator>(*device, *task, *cache, eo);
    if (baseline_ms <= 0) baseline_ms = evaluator->MeasureBaselineLaunchMs();
  } catch (const InputError& e) {
    return fatal(e.what(), 2);
  } catch (const WorkerError& e) {  // a reference process that cannot start
    return fatal(e.what(), e.exit_code());
  } catch (const std::exception& e) {
    return fatal(e.what(), 1);
  }
  SendMessage(out, {{"ready", true},
                    {"device", DeviceInfoToJson(device->info())},
                    {"baseline_ms", baseline_ms},
                    {"peak_gbs", evaluator->peak_bandwidth().gbs},
                    {"peak_source", evaluator->peak_bandwidth().source},
                    {"peak_gflops", evaluator->peak_compute().Max()},
                    {"peak_gflops_source", evaluator->peak_compute().source},
                    {"pid", getpid()}});

  MessageReader requests(args.in_fd);
  while (std::optional<nlohmann::json> request = requests.Next()) {
    int id = request->value("id", 0);
    RunReply reply;
    Evaluation& ev = reply.evaluation;
    std::string tool_error;
    nlohmann::json config = nlohmann::json::object();
    try {
      const nlohmann::json& run = request->at("run");
      config = run.value("config", config);
      reply.key = run.value("key", "");
      ev = evaluator->Evaluate(RunRequestFromJson(run), &reply.listing);
    } catch (const std::exception& e) {
      tool_error = e.what();
    }
    // A sticky device error leaves this process unusable: the candidate crashed it.
    DeviceStatus health = device->HealthCheck();
    bool restart = !health.ok();
    if (restart) {
      // The evaluation's own reason says where it was; a tool error needs the last place.
      std::string before =
          tool_error.empty() ? std::string(StatusName(ev.status)) + ": " + ev.reason
                             : fmt::format("{} ({})", tool_error, DescribePlace(reporter.place()));
      if (!tool_error.empty()) ev.bench_sizes = reporter.place().sizes;
      ev.status = Status::kCrash;
      ev.reason = fmt::format("the device is unusable after this candidate ({}); first sign: {}",
                              health.message(), before);
      ev.config = ConfigFromJson(config);
      ev.device = device->info().Label();
      tool_error.clear();
    }
    if (!tool_error.empty()) {
      SendMessage(out, {{"id", id}, {"error", tool_error}});
      continue;
    }
    nlohmann::json message = RunReplyToJson(reply);
    message["id"] = id;
    message["restart"] = restart;
    SendMessage(out, message);
    if (restart) return 0;
  }
  return 0;  // the supervisor closed the channel: done
}

}  // namespace kf
