#pragma once
// Compiling without the device: a pool of builder processes (`kfoundry builder`), one per core by
// default, each compiling for a named target (NVRTC for the target's architecture) through the
// shared compile cache. A process, not a thread, per job slot: a compile that runs past its
// deadline is ended by killing its builder, and a compiler that crashes takes only its builder
// with it; either way the job gets a failed CompileResult saying so and a fresh builder starts.
// Backends that compile only where the device is (OpenCL) have no builder: the runner compiles.

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/compile.hpp"
#include "core/device_info.hpp"

namespace kf {

struct BuilderOptions {
  std::string binary;  // the kfoundry executable, run as `kfoundry builder ...`
  DeviceInfo target;   // what to compile for (and the compile cache's key)
  int jobs = 0;        // builder processes; 0 = one per core
  double compile_timeout_s = 120;
  double startup_timeout_s = 60;
};

class BuilderPool {
 public:
  // nullopt: no builder could start (the caller compiles where the device is instead).
  using Done = std::function<void(std::optional<CompileResult>)>;

  explicit BuilderPool(BuilderOptions options);
  ~BuilderPool();  // jobs still queued are answered nullopt
  BuilderPool(const BuilderPool&) = delete;
  BuilderPool& operator=(const BuilderPool&) = delete;

  // `done` is called on a pool thread.
  void Submit(CompileRequest request, Done done);
  int jobs() const { return static_cast<int>(threads_.size()); }
  int compiled() const;        // jobs answered with a CompileResult
  int deadline_kills() const;  // builders killed at the compile deadline

 private:
  void Work();

  BuilderOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::pair<CompileRequest, Done>> queue_;
  bool stop_ = false;
  int compiled_ = 0, deadline_kills_ = 0;
  std::vector<std::thread> threads_;
};

// The builder's side: makes an offline compiler for `target`, says it is ready, then answers
// compile requests on its channel until end of input. Returns the process exit code.
struct BuilderArgs {
  std::string target_json;  // DeviceInfoToJson of the target
  int in_fd = 3, out_fd = 4;
  int parent = 0;
};
int RunBuilder(const BuilderArgs& args);

}  // namespace kf
