#pragma once
// The judge: candidates in, verdicts out, asynchronously. `Judge` is the contract the search and
// the tuner drive; `DeviceJudge` the one that judges on devices. There, a candidate is prechecked
// (signature, constraints, launch rule: no compile wasted on a configuration that cannot run),
// built by the builder pool when the devices' backend compiles offline (CUDA), and run by the first
// free runner (one per device, one candidate at a time each). Verdicts come back through a callback
// on a judge thread, in whatever order they finish; `Evaluate` is the blocking form.
//
// Errors are values: every outcome of a candidate is an Evaluation. Only the tool's own failures
// come back as `tool_error` (a runner whose executor cannot start again), for the caller to stop.

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/candidate.hpp"
#include "core/task.hpp"
#include "host/builder.hpp"
#include "host/runner.hpp"
#include "host/supervisor.hpp"

namespace kf {

struct JudgeOptions {
  ExecutorOptions executor;                 // aimed at the task; its `device` is ignored
  std::vector<std::string> devices = {""};  // one runner per selector ("" = the default device)
  int build_jobs = 0;                       // builder processes: 0 = one per core, < 0 = none
};

struct RunnerStats {
  std::string device;
  int jobs = 0;
  double busy_seconds = 0;
};

class Judge {
 public:
  using Done = std::function<void(JudgeResult)>;
  virtual ~Judge() = default;

  // `done` is called once, on another thread (or this one). `pinned` names the runner that must
  // run it (-1: any).
  virtual void Submit(Candidate candidate, Done done, int pinned = -1) = 0;
  // The same for a candidate already built elsewhere (a build worker): `built` is used where the
  // judge runs binaries it did not compile, else ignored. A failed build is a compile_error.
  virtual void SubmitBuilt(Candidate candidate, const CompileResult& /*built*/, Done done) {
    Submit(std::move(candidate), std::move(done));
  }
  virtual int runner_count() const = 0;
  virtual int build_jobs() const { return 0; }
  // Candidates submitted so far that have not started to run are answered `cancelled` instead
  // (a search whose time is up does not wait for its queue). One that is running finishes.
  virtual void CancelPending() {}
  // Submit and wait.
  JudgeResult Evaluate(Candidate candidate, int pinned = -1);
};

class DeviceJudge : public Judge {
 public:
  // Starts one executor per device (in parallel) and, where it applies, the builder pool. Throws
  // WorkerError when an executor cannot start.
  DeviceJudge(const Task& task, JudgeOptions options);
  ~DeviceJudge() override;
  DeviceJudge(const DeviceJudge&) = delete;
  DeviceJudge& operator=(const DeviceJudge&) = delete;

  void Submit(Candidate candidate, Done done, int pinned = -1) override;
  void SubmitBuilt(Candidate candidate, const CompileResult& built, Done done) override;
  int runner_count() const override { return static_cast<int>(runners_.size()); }
  int build_jobs() const override { return builder_ ? builder_->jobs() : 0; }
  void CancelPending() override { ++generation_; }

  const ExecutorInfo& info(int runner = 0) const { return runners_.at(runner)->info(); }
  bool builds() const { return builder_ != nullptr; }
  // Candidates submitted whose verdict has not been delivered.
  int in_flight() const { return in_flight_.load(); }
  // Candidates built (or being built) and waiting for a runner.
  int queued_to_run() const { return queue_.size(); }
  std::vector<RunnerStats> runner_stats() const;
  ExecutorCounters counters() const;

 private:
  void Take(Candidate candidate, std::optional<CompileResult> built, Done done, int pinned);
  void OnBuilt(Candidate candidate, std::optional<CompileResult> built, Done done, int pinned,
               const DeviceInfo& device, uint64_t generation);
  void Run(Candidate candidate, std::optional<CompileResult> compiled, Done done, int pinned,
           uint64_t generation);
  void Deliver(const Done& done, JudgeResult result);

  const Task& task_;
  JudgeOptions options_;
  RunQueue queue_;
  std::vector<std::unique_ptr<Runner>> runners_;
  std::unique_ptr<BuilderPool> builder_;
  bool precheck_ = false;  // every runner's device is alike: precheck against the first
  std::atomic<int> in_flight_{0};
  std::atomic<uint64_t> generation_{0};  // CancelPending moves it on: older candidates are dropped
};

}  // namespace kf
