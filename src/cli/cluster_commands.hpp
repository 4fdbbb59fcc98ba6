#pragma once
// The distributed roles (docs/distributed.md): `kfoundry coordinator` (optimize's search with a
// remote judge: candidates go to run workers over the broker), `kfoundry worker --role run`
// (judges a device kind's run jobs on this host's devices) and `kfoundry status` (the workers'
// heartbeats, the queues' depths, the runs).

#include <string>

#include "cli/optimize_command.hpp"

namespace kf {

inline constexpr const char* kDefaultQueueUrl = "amqp://kfoundry@127.0.0.1:5672/";

struct CoordinatorArgs {
  OptimizeArgs optimize;
  std::string queue = kDefaultQueueUrl;
  double wait_s = 600;  // for a live run worker of the wanted kind
};
int RunCoordinator(CoordinatorArgs args);

struct WorkerArgs {
  std::string role = "run";
  std::string device;  // selectors, as optimize's --device: one kind of device
  std::string store = "sqlite:kfoundry.db", queue = kDefaultQueueUrl;
  std::string cache_dir;  // task bundles; default: $KF_CACHE_DIR/tasks or ~/.cache/kfoundry/tasks
  double heartbeat_s = 5;
  int build_jobs = 0;
  bool fake = false;  // serve a fake device with the fake judge (host/fake_judge.hpp)
  ExecutorOptions executor;
};
int RunWorkerCommand(WorkerArgs args, const std::string& self);

struct StatusArgs {
  std::string store = "sqlite:kfoundry.db", queue;  // no queue: the store's view only
  bool json = false;
};
int RunStatus(const StatusArgs& args);

}  // namespace kf
