#pragma once
// The distributed roles (docs/distributed.md): `kfoundry coordinator` (optimize's search with a
// remote judge: candidates go to run workers over the broker), `kfoundry worker --role run`
// (judges a device kind's run jobs on this host's devices), `--role build` (compiles CUDA jobs),
// `--role propose` (does the proposers' chat requests and commands) and `kfoundry status` (the
// workers' heartbeats, the queues' depths, the runs).

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
  int concurrency = 4;  // propose: jobs at once
  // propose: the models this worker holds (keys from their api_key_env, or from
  // KFOUNDRY_LLM_API_KEY / OPENAI_API_KEY); none: a chat job's own model, with that key.
  std::string llm_models, llm_base_url, llm_model;
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
