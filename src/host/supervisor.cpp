#include "host/supervisor.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "core/codec.hpp"
#include "eval/executor_main.hpp"

namespace kf {

using Clock = std::chrono::steady_clock;

namespace {

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

nlohmann::json ExecutorCounters::ToJson() const {
  return {{"starts", starts},
          {"restarts", restarts},
          {"verdicts", verdicts},
          {"fault_seconds", fault_seconds}};
}

void ExecutorCounters::Add(const ExecutorCounters& other) {
  starts += other.starts;
  restarts += other.restarts;
  for (const auto& [status, n] : other.verdicts) verdicts[status] += n;
  fault_seconds += other.fault_seconds;
}

Supervisor::Supervisor(ExecutorOptions options) : options_(std::move(options)) {
  info_.baseline_ms = options_.baseline_ms;
  Start();
}

double Supervisor::launch_deadline_s() const {
  double s = options_.launch_factor * info_.baseline_ms * 1e-3;
  return std::clamp(s, options_.launch_floor_s, options_.launch_ceiling_s);
}

double Supervisor::PhaseSeconds(const std::string& phase, int launches) const {
  return phase == "compile"  ? options_.compile_timeout_s
         : phase == "launch" ? launch_deadline_s() * std::max(1, launches)
                             : options_.host_timeout_s;
}

double Supervisor::CompilingSeconds(double said) const {
  if (said <= 0) return 0;
  return std::min(std::max(said, options_.launch_floor_s), options_.compile_timeout_s);
}

void Supervisor::Start() {
  const ExecutorOptions& o = options_;
  std::vector<std::string> args = {o.binary,         "executor",
                                   "--task",         o.task,
                                   "--device",       o.device,
                                   "--sizes",        o.sizes,
                                   "--settings",     EvalSettingsToJson(o.settings).dump(),
                                   "--baseline-ms",  fmt::format("{}", info_.baseline_ms),
                                   "--limit-as-gib", fmt::format("{}", o.address_space_gib),
                                   "--limit-cpu-s",  fmt::format("{}", o.cpu_seconds),
                                   "--parent",       std::to_string(getpid())};
  Clock::time_point started = Clock::now();
  bool restart = counters_.starts > 0;
  nlohmann::json ready = process_.Start(args, o.startup_timeout_s);
  ++counters_.starts;
  if (restart) {
    ++counters_.restarts;
    counters_.fault_seconds += Seconds(Clock::now() - started);
    return;
  }
  info_.device = DeviceInfoFromJson(ready.at("device"));
  info_.baseline_ms = ready.value("baseline_ms", 0.0);
  info_.peak_gbs = ready.value("peak_gbs", 0.0);
  info_.peak_source = ready.value("peak_source", "");
  info_.peak_gflops = ready.value("peak_gflops", 0.0);
  info_.peak_gflops_source = ready.value("peak_gflops_source", "");
}

bool Supervisor::SendTo(Sent& s, bool wait) {
  nlohmann::json message = {{"id", s.id}, {"op", "run"}, {"run", RunRequestToJson(s.request)}};
  s.sent = wait ? process_.Send(message) : process_.SendIfRoom(message);
  return s.sent;
}

int Supervisor::Submit(RunRequest request) {
  Sent& s = queued_.emplace_back(Sent{++next_id_, std::move(request)});
  // Sent now when the executor can take it; otherwise (a dead executor, or one whose channel is
  // full) by Await, after a restart if need be.
  if (process_.running() && queued_.size() == 1) SendTo(s, true);
  return s.id;
}

std::optional<int> Supervisor::SubmitAhead(RunRequest request) {
  if (!process_.running() || queued_.empty() || !queued_.back().sent) return std::nullopt;
  Sent s{next_id_ + 1, std::move(request)};
  if (!SendTo(s, false)) return std::nullopt;
  ++next_id_;
  queued_.push_back(std::move(s));
  return queued_.back().id;
}

RunReply Supervisor::Await(int ticket) {
  if (queued_.empty() || queued_.front().id != ticket)
    throw std::logic_error("Supervisor::Await: replies are awaited in the order sent");
  struct PopFront {  // however this ends, the candidate leaves the queue
    std::deque<Sent>& q;
    ~PopFront() { q.pop_front(); }
  } pop{queued_};
  const RunRequest& request = queued_.front().request;
  if (!process_.running()) {
    Start();
    for (Sent& s : queued_) s.sent = false;
  }
  Clock::time_point started = Clock::now();
  const int id = ticket;
  EvalPlace place;                        // where the executor last said it was
  std::vector<unsigned long long> seeds;  // the check seeds it drew, in order
  // " (check at size set 'ragged', seed 42, candidate launch)", once there are inputs.
  auto at = [&] { return place.sizes.empty() ? "" : " (" + DescribePlace(place) + ")"; };
  auto fault = [&](Status status, std::string reason) {
    RunReply reply;
    reply.evaluation.status = status;
    reply.evaluation.reason = std::move(reason);
    reply.evaluation.config = request.candidate.config;
    reply.evaluation.device = info_.device.Label();
    reply.evaluation.bench_sizes = place.sizes;
    reply.evaluation.check_seeds = seeds;
    counters_.fault_seconds += Seconds(Clock::now() - started);
    ++counters_.verdicts[std::string(StatusName(status))];
    return reply;
  };
  std::string phase = "host";
  int launches = 1;
  double compiling = 0;  // seconds a first launch may spend compiling, on top of its deadline
  double allowed = PhaseSeconds(phase, 1);  // the phase's deadline, from its start
  Clock::time_point deadline = DeadlineIn(allowed);
  // What an earlier fault left unsent goes now: this candidate (waiting), the one behind it if it
  // fits.
  if (!queued_.front().sent && !SendTo(queued_.front(), true)) {
    std::string why = process_.DescribeExit("the executor");
    process_.Stop();
    return fault(Status::kCrash, why + " before the candidate was sent");
  }
  for (size_t i = 1; i < queued_.size() && !queued_[i].sent; ++i) {
    if (!SendTo(queued_[i], false)) break;
  }
  for (;;) {
    nlohmann::json message;
    WorkerProcess::ReadResult r = process_.Read(deadline, &message);
    if (r == WorkerProcess::ReadResult::kTimeout) {
      process_.Stop();  // the executor is killed; a fresh one starts with the next candidate
      if (phase == "compile") {
        return fault(Status::kCompileError,
                     fmt::format("compilation ran past its deadline of {:.0f} s",
                                 options_.compile_timeout_s));
      }
      if (phase == "launch") {
        return fault(
            Status::kTimeout,
            fmt::format("{} ran past {} deadline of {:.2f} s ({}x the baseline's {:.3f} ms a "
                        "launch, within [{}, {}] s{}); the executor was killed{}",
                        launches > 1 ? fmt::format("{} launches", launches) : "a launch",
                        launches > 1 ? "their" : "its", allowed, options_.launch_factor,
                        info_.baseline_ms, options_.launch_floor_s, options_.launch_ceiling_s,
                        compiling > 0 ? fmt::format(", and {:.2f} s for compiling at the first "
                                                    "launch at this group size on this device",
                                                    compiling)
                                      : "",
                        at()));
      }
      return fault(Status::kTimeout, fmt::format("the evaluation's host work ran past {:.0f} s; "
                                                 "the executor was killed{}",
                                                 options_.host_timeout_s, at()));
    }
    if (r == WorkerProcess::ReadResult::kEof) {
      std::string why = process_.DescribeExit("the executor");
      process_.Stop();
      return fault(Status::kCrash, fmt::format("{} during {}{}", why,
                                               phase == "launch" ? "a launch" : phase, at()));
    }
    if (message.contains("phase")) {
      phase = message["phase"].get<std::string>();
      launches = message.value("launches", 1);
      compiling = CompilingSeconds(message.value("compiling_s", 0.0));  // said of launches only
      place = PlaceFromMessage(message);
      if (place.step == "check" && place.seed && (seeds.empty() || seeds.back() != *place.seed))
        seeds.push_back(*place.seed);
      allowed = PhaseSeconds(phase, launches) + compiling;
      deadline = DeadlineIn(allowed);
      continue;
    }
    if (message.value("id", -1) != id) continue;
    if (message.contains("error")) {
      throw std::runtime_error("executor: " + message["error"].get<std::string>());
    }
    RunReply reply = RunReplyFromJson(message);
    if (message.value("restart", false)) {
      process_.Stop();
      counters_.fault_seconds += Seconds(Clock::now() - started);
    }
    ++counters_.verdicts[std::string(StatusName(reply.evaluation.status))];
    return reply;
  }
}

}  // namespace kf
