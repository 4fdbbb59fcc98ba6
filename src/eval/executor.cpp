#include "eval/executor.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <regex>

#include "backend/registry.hpp"
#include "core/evaluation_json.hpp"
#include "core/input_error.hpp"
#include "core/task.hpp"
#include "eval/evaluator.hpp"

namespace kf {

using Clock = std::chrono::steady_clock;

namespace {

bool WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool Send(int fd, const nlohmann::json& message) {
  return WriteAll(fd, message.dump() + "\n");
}

// Moves `fd` to a descriptor >= 10 with close-on-exec, so the child can dup2 onto 3 and 4 safely.
int HighFd(int fd) {
  int high = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  close(fd);
  return high;
}

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

}  // namespace

ExecutorOptions Aimed(ExecutorOptions options, std::string binary, std::string task_dir,
                      std::string device, std::string sizes) {
  options.binary = std::move(binary);
  options.task = std::move(task_dir);
  options.device = std::move(device);
  options.sizes = std::move(sizes);
  return options;
}

nlohmann::json ExecutorCounters::ToJson() const {
  return {{"starts", starts},
          {"restarts", restarts},
          {"verdicts", verdicts},
          {"fault_seconds", fault_seconds}};
}

Supervisor::Supervisor(ExecutorOptions options) : options_(std::move(options)) {
  baseline_ms_ = options_.baseline_ms;
  Start();
}

Supervisor::~Supervisor() {
  Stop();
}

double Supervisor::launch_deadline_s() const {
  double s = options_.launch_factor * baseline_ms_ * 1e-3;
  return std::clamp(s, options_.launch_floor_s, options_.launch_ceiling_s);
}

void Supervisor::Start() {
  int request[2], reply[2], err[2];
  if (pipe2(request, O_CLOEXEC) != 0 || pipe2(reply, O_CLOEXEC) != 0 ||
      pipe2(err, O_CLOEXEC) != 0) {
    throw ExecutorError(fmt::format("cannot create executor pipes: {}", std::strerror(errno)), 1);
  }
  request[0] = HighFd(request[0]);
  request[1] = HighFd(request[1]);
  reply[0] = HighFd(reply[0]);
  reply[1] = HighFd(reply[1]);
  err[0] = HighFd(err[0]);
  err[1] = HighFd(err[1]);

  const ExecutorOptions& o = options_;
  std::vector<std::string> args = {o.binary,         "executor",
                                   "--task",         o.task,
                                   "--device",       o.device,
                                   "--sizes",        o.sizes,
                                   "--seeds",        std::to_string(o.seeds),
                                   "--warmup-runs",  std::to_string(o.warmup_runs),
                                   "--min-runs",     std::to_string(o.min_runs),
                                   "--max-runs",     std::to_string(o.max_runs),
                                   "--min-timed-ms", fmt::format("{}", o.min_timed_ms),
                                   "--baseline-ms",  fmt::format("{}", baseline_ms_),
                                   "--limit-as-gib", fmt::format("{}", o.address_space_gib),
                                   "--limit-cpu-s",  fmt::format("{}", o.cpu_seconds),
                                   "--parent",       std::to_string(getpid())};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  Clock::time_point started = Clock::now();
  pid_t pid = fork();
  if (pid < 0) throw ExecutorError(fmt::format("fork failed: {}", std::strerror(errno)), 1);
  if (pid == 0) {  // only async-signal-safe calls until exec
    dup2(request[0], 3);
    dup2(reply[1], 4);
    dup2(err[1], 2);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(request[0]);
  close(reply[1]);
  close(err[1]);
  stderr_from_child_ = err[0];
  fcntl(stderr_from_child_, F_SETFL, O_NONBLOCK);
  pid_ = pid;
  to_child_ = request[1];
  from_child_ = reply[0];
  pending_.clear();
  bool restart = counters_.starts > 0;
  ++counters_.starts;
  if (restart) ++counters_.restarts;

  nlohmann::json ready;
  ReadResult r = ReadMessage(started + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(o.startup_timeout_s)),
                             &ready);
  if (r != ReadResult::kMessage || ready.contains("fatal")) {
    std::string why = r == ReadResult::kTimeout ? "did not become ready in time"
                      : r == ReadResult::kEof   ? DescribeExit()
                                                : ready["fatal"].get<std::string>();
    int code = r == ReadResult::kMessage ? ready.value("exit_code", 1) : 1;
    Stop();
    throw ExecutorError(why, code);
  }
  if (!restart) {
    info_ = ready;
    baseline_ms_ = ready.value("baseline_ms", 0.0);
  } else {
    counters_.fault_seconds += Seconds(Clock::now() - started);
  }
}

void Supervisor::ForwardStderr(bool drain) {
  if (stderr_from_child_ < 0) return;
  char buf[65536];
  for (;;) {
    ssize_t n = read(stderr_from_child_, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    stderr_pending_.append(buf, static_cast<size_t>(n));
  }
  static const std::regex chatter(R"(^\d+ (warning|error)s? generated\.$)");
  size_t newline;
  while ((newline = stderr_pending_.find('\n')) != std::string::npos) {
    std::string line = stderr_pending_.substr(0, newline);
    stderr_pending_.erase(0, newline + 1);
    if (!std::regex_match(line, chatter)) fmt::print(stderr, "{}\n", line);
  }
  if (drain && !stderr_pending_.empty()) {
    fmt::print(stderr, "{}\n", stderr_pending_);
    stderr_pending_.clear();
  }
}

void Supervisor::Stop() {
  if (to_child_ >= 0) close(to_child_);
  if (from_child_ >= 0) close(from_child_);
  to_child_ = from_child_ = -1;
  if (pid_ > 0) {
    // Closing the request pipe asks a healthy executor to exit; one that does not is killed.
    bool exited = false;
    for (int i = 0; i < 50 && !exited; ++i) {
      exited = waitpid(pid_, nullptr, WNOHANG) == pid_;
      if (!exited) usleep(10000);
    }
    if (!exited) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    pid_ = -1;
  }
  ForwardStderr(true);
  if (stderr_from_child_ >= 0) close(stderr_from_child_);
  stderr_from_child_ = -1;
}

std::string Supervisor::DescribeExit() {
  int status = 0;
  if (pid_ <= 0) return "the executor is not running";
  if (waitpid(pid_, &status, 0) != pid_) return "the executor vanished";
  pid_ = -1;
  if (WIFSIGNALED(status))
    return fmt::format("the executor died from {}", SignalName(WTERMSIG(status)));
  if (WIFEXITED(status))
    return fmt::format("the executor exited with code {}", WEXITSTATUS(status));
  return "the executor stopped";
}

Supervisor::ReadResult Supervisor::ReadMessage(Clock::time_point deadline, nlohmann::json* out) {
  for (;;) {
    size_t newline = pending_.find('\n');
    if (newline != std::string::npos) {
      *out = nlohmann::json::parse(pending_.substr(0, newline), nullptr, false);
      pending_.erase(0, newline + 1);
      if (out->is_discarded()) continue;  // not ours: ignore a malformed line
      return ReadResult::kMessage;
    }
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return ReadResult::kTimeout;
    pollfd p[2] = {{from_child_, POLLIN, 0}, {stderr_from_child_, POLLIN, 0}};
    int ready = poll(p, stderr_from_child_ >= 0 ? 2 : 1,
                     static_cast<int>(std::min<long long>(left, 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return ReadResult::kTimeout;
    if (stderr_from_child_ >= 0 && (p[1].revents & (POLLIN | POLLHUP))) {
      ForwardStderr(false);
      if (!(p[0].revents & (POLLIN | POLLHUP))) {
        if (p[1].revents & POLLHUP) {  // its stderr closed: watch the replies alone
          close(stderr_from_child_);
          stderr_from_child_ = -1;
        }
        continue;
      }
    }
    char buf[65536];
    ssize_t n = read(from_child_, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ReadResult::kEof;
    pending_.append(buf, static_cast<size_t>(n));
  }
}

Evaluation Supervisor::Evaluate(const Kernel& kernel, const Config& config) {
  if (pid_ <= 0) Start();
  Clock::time_point started = Clock::now();
  int id = ++next_id_;
  nlohmann::json request = {{"id", id},
                            {"path", kernel.path},
                            {"source", kernel.source},
                            {"config", ConfigToJson(config)}};
  auto fault = [&](Status status, std::string reason) {
    Evaluation ev;
    ev.status = status;
    ev.reason = std::move(reason);
    ev.config = config;
    ev.device = info_.value("device", "");
    counters_.fault_seconds += Seconds(Clock::now() - started);
    ++counters_.verdicts[std::string(StatusName(status))];
    return ev;
  };

  std::string phase = "host";
  auto budget = [&](const std::string& p) {
    double s = p == "compile"  ? options_.compile_timeout_s
               : p == "launch" ? launch_deadline_s()
                               : options_.host_timeout_s;
    return Clock::now() +
           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  Clock::time_point deadline = budget(phase);
  if (!Send(to_child_, request)) {
    std::string why = DescribeExit();
    Stop();
    return fault(Status::kCrash, why + " before the candidate was sent");
  }
  for (;;) {
    nlohmann::json message;
    ReadResult r = ReadMessage(deadline, &message);
    if (r == ReadResult::kTimeout) {
      Stop();  // the executor is killed; a fresh one starts with the next candidate
      if (phase == "compile") {
        return fault(Status::kCompileError,
                     fmt::format("compilation ran past its deadline of {:.0f} s",
                                 options_.compile_timeout_s));
      }
      if (phase == "launch") {
        return fault(Status::kTimeout,
                     fmt::format("a launch ran past its deadline of {:.2f} s ({}x the baseline's "
                                 "{:.3f} ms, within [{}, {}] s); the executor was killed",
                                 launch_deadline_s(), options_.launch_factor, baseline_ms_,
                                 options_.launch_floor_s, options_.launch_ceiling_s));
      }
      return fault(Status::kTimeout, fmt::format("the evaluation's host work ran past {:.0f} s; "
                                                 "the executor was killed",
                                                 options_.host_timeout_s));
    }
    if (r == ReadResult::kEof) {
      std::string why = DescribeExit();
      Stop();
      return fault(Status::kCrash,
                   fmt::format("{} during {}", why, phase == "launch" ? "a launch" : phase));
    }
    if (message.contains("phase")) {
      phase = message["phase"].get<std::string>();
      deadline = budget(phase);
      continue;
    }
    if (message.value("id", -1) != id) continue;
    if (message.contains("error")) {
      throw std::runtime_error("executor: " + message["error"].get<std::string>());
    }
    Evaluation ev = EvaluationFromJson(message["evaluation"]);
    if (message.value("restart", false)) {
      Stop();
      counters_.fault_seconds += Seconds(Clock::now() - started);
    }
    ++counters_.verdicts[std::string(StatusName(ev.status))];
    return ev;
  }
}

bool Supervisor::Precompile(const Kernel& kernel, const Config& config) {
  if (pid_ <= 0) Start();
  int id = ++next_id_;
  nlohmann::json request = {{"id", id},
                            {"op", "compile"},
                            {"path", kernel.path},
                            {"source", kernel.source},
                            {"config", ConfigToJson(config)}};
  if (!Send(to_child_, request)) {
    Stop();
    return false;
  }
  Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(options_.compile_timeout_s));
  for (;;) {
    nlohmann::json message;
    ReadResult r = ReadMessage(deadline, &message);
    if (r != ReadResult::kMessage) {
      Stop();  // a hung or crashed compiler: the next request starts a fresh executor
      return false;
    }
    if (message.value("id", -1) == id) return message.value("compiled", false);
  }
}

// ---- the executor's side ----

namespace {

class PhaseReporter : public EvalObserver {
 public:
  explicit PhaseReporter(int fd) : fd_(fd) {}
  void Phase(EvalPhase p) override {
    const char* name = p == EvalPhase::kCompile  ? "compile"
                       : p == EvalPhase::kLaunch ? "launch"
                                                 : "host";
    Send(fd_, {{"phase", name}});
  }

 private:
  int fd_;
};

void ApplyLimits(const ExecutorOptions& o) {
  if (o.address_space_gib > 0) {
    rlim_t bytes = static_cast<rlim_t>(o.address_space_gib * (1ull << 30));
    rlimit r{bytes, bytes};
    setrlimit(RLIMIT_AS, &r);
  }
  if (o.cpu_seconds > 0) {
    rlimit r{static_cast<rlim_t>(o.cpu_seconds), static_cast<rlim_t>(o.cpu_seconds) + 5};
    setrlimit(RLIMIT_CPU, &r);
  }
}

}  // namespace

int RunExecutor(const ExecutorArgs& args) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the supervisor
  if (args.parent > 0 && getppid() != args.parent) return 1;
  dup2(2, 1);  // kernels' printf and driver chatter must not reach the reply channel
  signal(SIGPIPE, SIG_IGN);
  const int out = args.out_fd;
  const ExecutorOptions& o = args.options;
  ApplyLimits(o);

  auto fatal = [&](const std::string& message, int code) {
    Send(out, {{"fatal", message}, {"exit_code", code}});
    return code;
  };
  std::unique_ptr<Device> device;
  std::unique_ptr<Task> task;
  std::unique_ptr<CompileCache> cache;
  std::unique_ptr<Evaluator> evaluator;
  PhaseReporter reporter(out);
  double baseline_ms = args.baseline_ms;
  try {
    task = std::make_unique<Task>(LoadTask(o.task));
    auto backends = MakeBackends();
    std::string error;
    device = OpenDevice(backends, o.device, &error);
    if (!device) return fatal(error, 3);
    cache = std::make_unique<CompileCache>(DefaultCacheDir());
    EvalOptions eo;
    eo.bench_sizes = o.sizes;
    eo.check_seeds = o.seeds;
    eo.warmup_runs = o.warmup_runs;
    eo.min_runs = o.min_runs;
    eo.max_runs = o.max_runs;
    eo.min_timed_ms = o.min_timed_ms;
    eo.observer = &reporter;
    evaluator = std::make_unique<Evaluator>(*device, *task, *cache, eo);
    if (baseline_ms <= 0) baseline_ms = evaluator->MeasureBaselineLaunchMs();
  } catch (const InputError& e) {
    return fatal(e.what(), 2);
  } catch (const std::exception& e) {
    return fatal(e.what(), 1);
  }
  const DeviceInfo& info = device->info();
  Send(out, {{"ready", true},
             {"device", fmt::format("{} ({})", info.Selector(), info.name)},
             {"backend", info.backend},
             {"vendor", info.vendor},
             {"arch", info.arch},
             {"name", info.name},
             {"class", DeviceClassName(info.device_class)},
             {"max_work_group_size", info.max_work_group_size},
             {"local_mem_bytes", info.local_mem_bytes},
             {"sub_group_width", info.sub_group_width},
             {"compute_units", info.compute_units},
             {"baseline_ms", baseline_ms},
             {"peak_gbs", evaluator->peak_bandwidth().gbs},
             {"peak_source", evaluator->peak_bandwidth().source},
             {"pid", getpid()}});

  std::string pending;
  char buf[65536];
  for (;;) {
    size_t newline;
    while ((newline = pending.find('\n')) == std::string::npos) {
      ssize_t n = read(args.in_fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return 0;  // the supervisor closed the channel: done
      pending.append(buf, static_cast<size_t>(n));
    }
    nlohmann::json request = nlohmann::json::parse(pending.substr(0, newline), nullptr, false);
    pending.erase(0, newline + 1);
    if (!request.is_object()) continue;
    int id = request.value("id", 0);
    if (request.value("op", "") == "compile") {
      bool compiled = false;
      try {
        Kernel kernel = ParseKernel(request.at("path").get<std::string>(),
                                    request.at("source").get<std::string>());
        compiled = evaluator->Precompile(kernel, ConfigFromJson(request.at("config")));
      } catch (const std::exception&) {
        // not a kernel it can compile: the evaluation will say why
      }
      Send(out, {{"id", id}, {"compiled", compiled}});
      continue;
    }
    Evaluation ev;
    std::string tool_error;
    try {
      Kernel kernel = ParseKernel(request.at("path").get<std::string>(),
                                  request.at("source").get<std::string>());
      ev = evaluator->Evaluate(kernel, ConfigFromJson(request.at("config")));
    } catch (const std::exception& e) {
      tool_error = e.what();
    }
    // A sticky device error leaves this process unusable: the candidate crashed it.
    DeviceStatus health = device->HealthCheck();
    bool restart = !health.ok();
    if (restart) {
      std::string before =
          tool_error.empty() ? std::string(StatusName(ev.status)) + ": " + ev.reason : tool_error;
      ev.status = Status::kCrash;
      ev.reason = fmt::format("the device is unusable after this candidate ({}); first sign: {}",
                              health.message(), before);
      ev.config = ConfigFromJson(request.value("config", nlohmann::json::object()));
      tool_error.clear();
    }
    if (!tool_error.empty()) {
      Send(out, {{"id", id}, {"error", tool_error}});
      continue;
    }
    Send(out, {{"id", id}, {"evaluation", EvaluationToJson(ev)}, {"restart", restart}});
    if (restart) return 0;
  }
}

}  // namespace kf
