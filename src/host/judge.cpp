#include "host/judge.hpp"

#include <fmt/format.h>

#include <future>

#include "backend/registry.hpp"
#include "eval/precheck.hpp"
#include "eval/verdict.hpp"

namespace kf {

namespace {

bool Alike(const DeviceInfo& a, const DeviceInfo& b) {
  return a.backend == b.backend && a.arch == b.arch && a.device_class == b.device_class &&
         a.max_work_group_size == b.max_work_group_size && a.name == b.name;
}

}  // namespace

DeviceJudge::DeviceJudge(const Task& task, JudgeOptions options)
    : task_(task), options_(std::move(options)) {
  if (options_.devices.empty()) options_.devices.push_back("");
  std::vector<std::future<std::unique_ptr<Runner>>> starting;
  for (size_t i = 0; i < options_.devices.size(); ++i) {
    ExecutorOptions o = options_.executor;
    o.device = options_.devices[i];
    starting.push_back(std::async(std::launch::async, [this, i, o] {
      return std::make_unique<Runner>(static_cast<int>(i), o, queue_);
    }));
  }
  std::exception_ptr failure;
  for (auto& f : starting) {
    try {
      runners_.push_back(f.get());
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) {
    queue_.Close();
    runners_.clear();
    std::rethrow_exception(failure);
  }
  for (size_t i = 0; i < runners_.size(); ++i) {
    for (size_t j = i + 1; j < runners_.size(); ++j) {
      if (runners_[i]->info().device.Selector() == runners_[j]->info().device.Selector()) {
        std::string twice = runners_[i]->info().device.Label();
        queue_.Close();
        runners_.clear();
        throw WorkerError(twice + " was selected twice by --device: name each device once", 2);
      }
    }
  }
  const DeviceInfo& first = runners_[0]->info().device;
  precheck_ = true;
  for (const auto& r : runners_) precheck_ = precheck_ && Alike(r->info().device, first);
  if (options_.build_jobs >= 0 && precheck_) {
    auto backends = MakeBackends();
    std::string why_not;
    if (MakeOfflineCompiler(backends, first, &why_not)) {
      BuilderOptions b;
      b.binary = options_.executor.binary;
      b.target = first;
      b.jobs = options_.build_jobs;
      b.compile_timeout_s = options_.executor.compile_timeout_s;
      builder_ = std::make_unique<BuilderPool>(b);
    }
  }
}

DeviceJudge::~DeviceJudge() {
  builder_.reset();  // answers what is still queued, which may queue runs
  queue_.Close();
  runners_.clear();  // each runner finishes its queue, then stops its executor
}

void DeviceJudge::Deliver(const Done& done, JudgeResult result) {
  --in_flight_;
  done(std::move(result));
}

void DeviceJudge::Submit(Candidate candidate, Done done, int pinned) {
  Take(std::move(candidate), std::nullopt, std::move(done), pinned);
}

void DeviceJudge::SubmitBuilt(Candidate candidate, const CompileResult& built, Done done) {
  Take(std::move(candidate), built, std::move(done), -1);
}

void DeviceJudge::Take(Candidate candidate, std::optional<CompileResult> built, Done given,
                       int pinned) {
  ++in_flight_;
  // Every answer carries its candidate's key back, whichever stage gives it.
  Done done = [key = candidate.key, given = std::move(given)](JudgeResult r) {
    r.key = key;
    given(std::move(r));
  };
  const uint64_t generation = generation_.load();
  const DeviceInfo& device = runners_[pinned < 0 ? 0 : static_cast<size_t>(pinned)]->info().device;
  if (precheck_ || pinned >= 0) {
    const SizeSet& bench = task_.BenchSizes(options_.executor.sizes,
                                            std::string(DeviceClassName(device.device_class)));
    if (std::optional<Evaluation> rejected =
            Precheck(task_, candidate.kernel, candidate.config, device, bench)) {
      JudgeResult r;
      r.evaluation = std::move(*rejected);
      Deliver(done, std::move(r));
      return;
    }
  }
  if (built) {  // built elsewhere: its artifact, or its compile error
    OnBuilt(std::move(candidate), std::move(built), std::move(done), pinned, device, generation);
    return;
  }
  if (!builder_) {
    Run(std::move(candidate), std::nullopt, std::move(done), pinned, generation);
    return;
  }
  CompileRequest request = CompileRequestFor(candidate.kernel, candidate.config, task_.defines);
  builder_->Submit(std::move(request), [this, candidate = std::move(candidate),
                                        done = std::move(done), pinned, device,
                                        generation](std::optional<CompileResult> built) mutable {
    OnBuilt(std::move(candidate), std::move(built), std::move(done), pinned, device, generation);
  });
}

void DeviceJudge::OnBuilt(Candidate candidate, std::optional<CompileResult> built, Done done,
                          int pinned, const DeviceInfo& device, uint64_t generation) {
  if (generation != generation_.load()) {
    JudgeResult cancelled;
    cancelled.cancelled = true;
    Deliver(done, std::move(cancelled));
    return;
  }
  if (built && !built->ok) {  // a compile error never reaches a device
    JudgeResult r;
    r.evaluation.device = device.Label();
    r.evaluation.config = candidate.config;
    CompileFailed(r.evaluation, built->log, candidate.kernel.path, device);
    Deliver(done, std::move(r));
    return;
  }
  Run(std::move(candidate), std::move(built), std::move(done), pinned, generation);
}

void DeviceJudge::Run(Candidate candidate, std::optional<CompileResult> compiled, Done done,
                      int pinned, uint64_t generation) {
  std::string listing;
  if (compiled) listing = std::move(compiled->artifact.listing);  // the executor needs no listing
  RunJob job;
  job.request = RunRequest{std::move(candidate), std::move(compiled)};
  job.pinned = pinned;
  job.cancelled = [this, generation] { return generation != generation_.load(); };
  job.done = [this, done = std::move(done), listing = std::move(listing)](RunReply reply) mutable {
    if (reply.listing.empty()) reply.listing = std::move(listing);
    Deliver(done, std::move(reply));
  };
  queue_.Push(std::move(job));
}

JudgeResult Judge::Evaluate(Candidate candidate, int pinned) {
  std::promise<JudgeResult> promise;
  std::future<JudgeResult> future = promise.get_future();
  Submit(
      std::move(candidate), [&promise](JudgeResult r) { promise.set_value(std::move(r)); }, pinned);
  return future.get();
}

std::vector<RunnerStats> DeviceJudge::runner_stats() const {
  std::vector<RunnerStats> out;
  for (const auto& r : runners_)
    out.push_back({r->info().device.Label(), r->jobs_run(), r->busy_seconds()});
  return out;
}

ExecutorCounters DeviceJudge::counters() const {
  ExecutorCounters total;
  for (const auto& r : runners_) total.Add(r->counters());
  return total;
}

}  // namespace kf
