#pragma once
// A build worker (`kfoundry worker --role build`): takes jobs from a backend's build queue
// (kf.build.cuda), compiles each for the device kind it names (its `target`) with a compile
// function (the cli's: today's builder pool, one per target, through the shared compile cache),
// and forwards the job with its artifact, or its compile error, to the job's run queue; it acks
// the build job once the broker confirmed the forward. So the GPU hosts' CPUs run candidates,
// not compilers.
//
// A job whose scope its coordinator cancelled (dist/cancelled_scopes.hpp) is acknowledged
// without being compiled or forwarded.
//
// A build job taken by kRunAttempts workers before, none of which forwarded it, is forwarded
// unbuilt: the run worker's executor compiles it, isolated as any compile there is.

#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "core/compile.hpp"
#include "core/device_info.hpp"
#include "dist/amqp_client.hpp"
#include "dist/cancelled_scopes.hpp"
#include "store/store.hpp"

namespace kf {

// Compiles `request` for `target`; `done` once, on any thread, with nothing when no compiler
// could run (the job then goes on unbuilt).
using CompileFunction = std::function<void(const DeviceInfo& target, CompileRequest request,
                                           std::function<void(std::optional<CompileResult>)> done)>;

struct BuildWorkerOptions {
  std::string id;  // WorkerRecord::id: "HOST:PID:build"
  std::string host;
  std::string backend = "cuda";  // whose build queue it serves
  int jobs = 1;                  // compiles at once (the prefetch is twice this)
  double heartbeat_s = 5;
};

class BuildWorker {
 public:
  BuildWorker(AmqpClient& amqp, Store& store, CompileFunction compile, BuildWorkerOptions options);

  // Serves until `stop`, then drains (finishes and forwards what it took). Returns "".
  std::string Serve(const std::atomic<bool>& stop);

  const std::string& queue() const { return queue_; }
  long long jobs_done() const { return jobs_done_.load(); }
  // Jobs taken after their coordinator cancelled them: acknowledged, not compiled.
  long long jobs_skipped() const { return jobs_skipped_.load(); }

 private:
  void Take(const Delivery& delivery);
  void Heartbeat(const std::string& state);

  AmqpClient& amqp_;
  Store& store_;
  CompileFunction compile_;
  BuildWorkerOptions options_;
  std::string queue_;
  std::atomic<int> in_flight_{0};
  std::atomic<long long> jobs_done_{0};
  std::atomic<long long> jobs_skipped_{0};
  CancelledScopes cancelled_;
};

}  // namespace kf
