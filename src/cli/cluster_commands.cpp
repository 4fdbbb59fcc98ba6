#include "cli/cluster_commands.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include "backend/registry.hpp"
#include "core/codec.hpp"
#include "core/host_name.hpp"
#include "core/input_error.hpp"
#include "core/task_bundle.hpp"
#include "dist/amqp_session.hpp"
#include "dist/build_worker.hpp"
#include "dist/heartbeat.hpp"
#include "dist/propose_worker.hpp"
#include "dist/queue_names.hpp"
#include "dist/remote_judge.hpp"
#include "dist/remote_propose.hpp"
#include "dist/run_worker.hpp"
#include "eval/compile_cache.hpp"
#include "eval/executor_main.hpp"
#include "host/builder.hpp"
#include "host/fake_judge.hpp"
#include "propose/llm/llm_config.hpp"

namespace kf {

namespace {

using Clock = std::chrono::steady_clock;

AmqpUrl ParseQueueOption(const std::string& url) {
  try {
    return ParseAmqpUrl(url);
  } catch (const std::invalid_argument& e) {
    throw InputError("--queue", 0, RedactAmqpUrl(url), e.what());
  }
}

// Whether a worker's device (as its heartbeat lists it) is one `--device` asks for.
bool Wanted(const nlohmann::json& device, const std::string& spec) {
  DeviceInfo d = DeviceInfoFromJson(device);
  if (spec.empty()) return true;
  for (std::string one : SplitSelectors(spec)) {
    if (one.size() > 4 && one.compare(one.size() - 4, 4, ":all") == 0)
      one = one.substr(0, one.size() - 4);
    // An index names a device of one host, not a kind: cuda:1 asks for CUDA devices.
    if (size_t colon = one.find(':');
        colon != std::string::npos &&
        one.find_first_not_of("0123456789", colon + 1) == std::string::npos)
      one = one.substr(0, colon);
    if (SelectorMatches(d, one)) return true;
  }
  return false;
}

// The run workers of one device kind the coordinator sends its jobs to.
struct WorkerKind {
  std::string queue;
  DeviceInfo device;
  double peak_gbs = 0;
  int devices = 0;  // served by live workers of the kind
  int workers = 0;
  std::vector<std::string> own_queues;  // theirs, for pinned jobs (RunWorker::own_queue)
};

std::optional<WorkerKind> FindKind(Store& store, const std::string& spec,
                                   const std::string& queue = "") {
  std::optional<WorkerKind> kind;
  for (const WorkerRecord& w : store.Workers()) {  // the most recent heartbeat first
    if (w.role != "run" || !LiveWorker(w) || w.devices.empty()) continue;
    if (queue.empty() ? !Wanted(w.devices.front(), spec) : w.queue != queue) continue;
    if (!kind) {
      kind = WorkerKind{w.queue, DeviceInfoFromJson(w.devices.front()), 0, 0, 0, {}};
    } else if (w.queue != kind->queue) {
      continue;
    }
    kind->devices += static_cast<int>(w.devices.size());
    ++kind->workers;
    if (std::string own = w.info.value("own_queue", ""); !own.empty())
      kind->own_queues.push_back(own);
    kind->peak_gbs = std::max(kind->peak_gbs, w.info.value("peak_gbs", 0.0));
  }
  return kind;
}

WorkerKind WaitForKind(Store& store, const std::string& spec, double wait_s,
                       const std::string& start_hint) {
  const Clock::time_point start = Clock::now();
  bool said = false;
  for (;;) {
    if (std::optional<WorkerKind> kind = FindKind(store, spec)) return *kind;
    double waited = std::chrono::duration<double>(Clock::now() - start).count();
    if (waited >= wait_s)
      throw WorkerError(
          fmt::format("no run worker{} has sent a heartbeat in the last {:.0f} s "
                      "after {:.0f} s of waiting; start one where the device is:\n  {}",
                      spec.empty() ? "" : " for --device " + spec, kLiveSeconds, wait_s,
                      start_hint),
          3);
    if (!said) {
      fmt::print(stderr,
                 "waiting up to {:.0f} s for a run worker{}; start one where the device is:\n"
                 "  {}\n",
                 wait_s, spec.empty() ? "" : " for --device " + spec, start_hint);
      said = true;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

// The live run workers of a kind (their devices and own queues), read again at most every few
// seconds.
class LiveKind {
 public:
  LiveKind(Store& store, WorkerKind kind) : store_(store), kind_(std::move(kind)) {}
  int devices() { return Now().devices; }
  std::vector<std::string> own_queues() { return Now().own_queues; }

 private:
  WorkerKind Now() {
    std::lock_guard lock(mu_);
    if (Clock::now() - read_ > std::chrono::seconds(5)) {
      read_ = Clock::now();
      try {
        std::optional<WorkerKind> now = FindKind(store_, "", kind_.queue);
        now_.devices = now ? now->devices : 0;
        now_.own_queues = now ? now->own_queues : std::vector<std::string>{};
      } catch (const std::exception&) {
        // keep the last: the store answers again later
      }
    }
    return now_;
  }

  Store& store_;
  WorkerKind kind_;
  std::mutex mu_;
  Clock::time_point read_ = Clock::now();
  WorkerKind now_ = kind_;
};

std::atomic<bool> g_stop{false};

void OnStopSignal(int) {
  g_stop = true;
}

}  // namespace

int RunCoordinator(CoordinatorArgs a) {
  const AmqpUrl url = ParseQueueOption(a.queue);
  PreparedRun p = PrepareRun(std::move(a.optimize));
  const RunSettings& rs = p.args.settings;
  Store& store = *p.store;
  // The task reaches the workers through the store, once.
  TaskBundle bundle = PackTaskFolder(p.task.dir, p.task.name);
  store.PutTaskBundle(bundle);
  const std::string hint = fmt::format("kfoundry worker --role run{} --store {} --queue {}",
                                       rs.device.empty() ? "" : " --device " + rs.device,
                                       AbsoluteStore(p.args.store), url.Redacted());
  WorkerKind kind = WaitForKind(store, rs.device, a.wait_s, hint);
  fmt::print(stderr, "run workers of {}: {} worker{} with {} device{} ({})\n", kind.device.name,
             kind.workers, kind.workers == 1 ? "" : "s", kind.devices, kind.devices == 1 ? "" : "s",
             kind.queue);

  AmqpClient amqp(url);
  LiveKind live(store, kind);
  RemoteJudgeOptions options;
  options.run = p.args.run;
  options.task_id = bundle.id;
  options.task_name = p.task.name;
  options.task_variant = p.task.variant;
  options.task_defines = p.task.defines;
  options.sizes = rs.sizes;
  options.settings = rs.judging;
  options.run_queue = kind.queue;
  options.devices = [&live] { return live.devices(); };
  options.worker_queues = [&live] { return live.own_queues(); };
  // CUDA compiles without its device: with a build worker alive, jobs are built there first.
  if (kind.device.backend == "cuda") {
    for (const WorkerRecord& w : store.Workers()) {
      if (w.role == "build" && LiveWorker(w) && w.queue == BuildQueueName("cuda")) {
        options.build_queue = w.queue;
        options.target = kind.device;
        fmt::print(stderr, "build workers: jobs are compiled on {} first\n", w.queue);
        break;
      }
    }
  }
  RemoteJudge judge(amqp, store, options);
  // A command's or a model's proposer: while a propose worker is alive (asked again as the search
  // goes, so one may join later), its side effects are done there (where the model can be reached
  // and its key is), on a connection of their own; else here.
  std::unique_ptr<AmqpClient> propose_amqp;
  std::unique_ptr<RemoteProposeEffects> proposing;
  if (rs.proposer.kind != "builtin") {
    propose_amqp = std::make_unique<AmqpClient>(url);
    RemoteProposeOptions po;
    po.run = p.args.run;
    const LlmSettings& l = rs.proposer.llm;
    po.chat_deadline_s = l.timeout_s * (l.retries + 1) + 60.0 * l.retries;
    po.worker_hint = fmt::format("kfoundry worker --role propose --store {} --queue {}",
                                 AbsoluteStore(p.args.store), url.Redacted());
    po.workers = [&store] { return LiveWorkers(store, "propose"); };
    po.effects = fmt::format("{} proposer's {}", rs.proposer.kind,
                             rs.proposer.kind == "llm" ? "chat requests" : "commands");
    proposing = std::make_unique<RemoteProposeEffects>(*propose_amqp, po);
    proposing->Available();  // says where they are done at first
  }
  JudgeSide side{judge,
                 kind.device,
                 kind.peak_gbs,
                 kind.queue,
                 "a worker of " + kind.queue,
                 "kfoundry coordinator --queue " + url.Redacted(),
                 [&judge] { return judge.worker_stats(); },
                 {},
                 proposing.get(),
                 proposing.get()};
  return SearchAndReport(p, side);
}

namespace {

// `worker --role build`: CUDA's build queue, compiled by a builder pool per target.
int ServeBuilds(const WorkerArgs& a, const std::string& self, const AmqpUrl& url, Store& store) {
  BuildWorkerOptions options;
  options.host = HostName();
  options.id = fmt::format("{}:{}:build", options.host, getpid());
  options.backend = "cuda";  // the one backend that compiles without its device
  options.heartbeat_s = a.heartbeat_s;
  const int jobs = a.build_jobs > 0
                       ? a.build_jobs
                       : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  options.jobs = jobs;
  std::mutex pools_mu;
  std::map<std::string, std::unique_ptr<BuilderPool>> pools;  // by target
  CompileFunction compile;
  if (a.fake) {
    compile = [](const DeviceInfo&, const CompileRequest& request,
                 const std::function<void(std::optional<CompileResult>)>& done) {
      CompileResult built;
      built.ok = true;
      built.artifact.symbols = request.entries;
      const std::string text = "fake binary of " + request.entries.front();
      for (char c : text) built.artifact.binary.push_back(static_cast<std::byte>(c));
      done(std::move(built));
    };
  } else {
    compile = [&](const DeviceInfo& target, CompileRequest request,
                  std::function<void(std::optional<CompileResult>)> done) {
      BuilderPool* pool = nullptr;
      {
        std::lock_guard lock(pools_mu);
        std::unique_ptr<BuilderPool>& p = pools[DeviceInfoToJson(target).dump()];
        if (!p) {
          BuilderOptions b;
          b.binary = self;
          b.target = target;
          b.jobs = jobs;
          b.compile_timeout_s = a.executor.compile_timeout_s;
          p = std::make_unique<BuilderPool>(b);
        }
        pool = p.get();
      }
      pool->Submit(std::move(request), std::move(done));
    };
  }
  AmqpClient amqp(url);
  BuildWorker worker(amqp, store, compile, options);
  fmt::print(stderr,
             "worker {}: compiling the jobs of {} ({} at once{}); stop with Ctrl-C or SIGTERM\n",
             options.id, worker.queue(), jobs, a.fake ? ", fake" : "");
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
  worker.Serve(g_stop);
  amqp.Close();
  {
    std::lock_guard lock(pools_mu);
    pools.clear();
  }
  fmt::print(stderr, "worker {}: stopped after {} jobs\n", options.id, worker.jobs_done());
  return 0;
}

// `worker --role propose`: the proposers' side effects, for any run.
int ServeProposals(const WorkerArgs& a, const AmqpUrl& url, Store& store) {
  ProposeWorkerOptions options;
  options.host = HostName();
  options.id = fmt::format("{}:{}:propose", options.host, getpid());
  options.concurrency = a.concurrency;
  options.heartbeat_s = a.heartbeat_s;
  options.limits.concurrency = a.concurrency;
  LlmFlags flags;
  flags.models_file = a.llm_models;
  flags.base_url = a.llm_base_url;
  flags.model = a.llm_model;
  if (!flags.models_file.empty() || !flags.base_url.empty() || !flags.model.empty())
    options.models = ResolveModels(flags);
  for (const char* variable : {"KFOUNDRY_LLM_API_KEY", "OPENAI_API_KEY"}) {
    const char* key = std::getenv(variable);
    if (key && *key && options.api_key.empty()) options.api_key = key;
  }
  AmqpClient amqp(url);
  ProposeWorker worker(amqp, store, options);
  std::string models;
  for (const ModelSettings& m : options.models) models += (models.empty() ? "" : ", ") + m.Label();
  fmt::print(stderr,
             "worker {}: doing proposers' chat requests and commands from {} ({} at once{}); "
             "stop with Ctrl-C or SIGTERM\n",
             options.id, kProposeQueue, options.concurrency,
             models.empty() ? "" : "; models " + models);
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
  worker.Serve(g_stop);
  amqp.Close();
  fmt::print(stderr, "worker {}: stopped after {} jobs\n", options.id, worker.jobs_done());
  return 0;
}

}  // namespace

int RunWorkerCommand(WorkerArgs a, const std::string& self) {
  if (a.role != "run" && a.role != "build" && a.role != "propose")
    throw InputError("--role", 0, a.role, "a worker's role is run, build or propose");
  const AmqpUrl url = ParseQueueOption(a.queue);
  std::unique_ptr<Store> store = OpenStore(a.store);
  if (a.role == "build") return ServeBuilds(a, self, url, *store);
  if (a.role == "propose") return ServeProposals(a, url, *store);
  RunWorkerOptions options;
  options.host = HostName();
  options.id = fmt::format("{}:{}:run", options.host, getpid());
  options.cache_dir = a.cache_dir.empty() ? DefaultCacheDir() + "/tasks" : a.cache_dir;
  options.heartbeat_s = a.heartbeat_s;
  std::mutex peak_mu;
  double peak_gbs = 0;
  options.info = [&] {
    std::lock_guard lock(peak_mu);
    return nlohmann::json{{"peak_gbs", peak_gbs}, {"fake", a.fake}};
  };
  JudgeFactory factory;
  if (a.fake) {
    options.devices = {FakeDevice(0, a.device.rfind("cuda", 0) == 0 ? "cuda" : "opencl")};
    factory = [](const Task&, const std::string&, const EvalSettings&) {
      return std::make_unique<FakeJudge>();
    };
  } else {
    auto backends = MakeBackends();
    std::string error;
    std::vector<std::string> selectors = ExpandDeviceSelectors(backends, a.device, &error);
    if (selectors.empty()) throw InputError("--device", 0, a.device, error);
    DeviceListing listing = ListDevices(backends);
    std::vector<std::string> canonical;
    for (const std::string& selector : selectors) {
      std::optional<DeviceInfo> d = SelectDevice(listing, selector, &error);
      if (!d) throw WorkerError(error, 3);
      options.devices.push_back(*d);
      canonical.push_back(d->Selector());
    }
    factory = [&, canonical](const Task& task, const std::string& sizes,
                             const EvalSettings& settings) -> std::unique_ptr<Judge> {
      JudgeOptions o;
      o.executor = Aimed(a.executor, self, task.dir, "", sizes);
      o.executor.settings = settings;
      o.devices = canonical;
      o.build_jobs = a.build_jobs;
      auto judge = std::make_unique<DeviceJudge>(task, o);
      std::lock_guard lock(peak_mu);
      peak_gbs = judge->info().peak_gbs;
      return judge;
    };
  }

  AmqpClient amqp(url);
  RunWorker worker(amqp, *store, factory, options);
  std::string devices;
  for (const DeviceInfo& d : options.devices) devices += (devices.empty() ? "" : ", ") + d.Label();
  fmt::print(stderr, "worker {}: serving {} from {} (store {}); stop with Ctrl-C or SIGTERM\n",
             options.id, devices, worker.queue(), RedactStoreUrl(a.store));
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
  std::string failure = worker.Serve(g_stop);
  amqp.Close();
  fmt::print(stderr, "worker {}: stopped after {} jobs{}\n", options.id, worker.jobs_done(),
             failure.empty() ? "" : ": " + failure);
  return failure.empty() ? 0 : 1;
}

int RunStatus(const StatusArgs& a) {
  std::unique_ptr<Store> store = OpenStore(a.store, /*must_exist=*/true);
  std::vector<WorkerRecord> workers = store->Workers();
  std::vector<RunInfo> runs = store->Runs();
  // Queue depths, by a passive declare each (one session per queue: asking for a queue that
  // is not there closes the channel).
  std::map<std::string, std::optional<QueueState>> queues;
  if (!a.queue.empty()) {
    const AmqpUrl url = ParseQueueOption(a.queue);
    queues[kDeadLetterQueue];
    for (const WorkerRecord& w : workers)
      if (!w.queue.empty()) queues[w.queue];
    for (const RunInfo& r : runs)
      if (!store->Stats(r.name).Finished()) queues[ResultsQueueName(r.name)];
    for (auto& [name, state] : queues) {
      try {
        AmqpSession session(url, 0);
        state = session.Inspect(name);
      } catch (const AmqpRefused&) {
        // not declared (yet): no figure
      }
    }
  }
  if (a.json) {
    nlohmann::json out = {{"workers", nlohmann::json::array()},
                          {"queues", nlohmann::json::object()},
                          {"runs", nlohmann::json::array()}};
    for (const WorkerRecord& w : workers) {
      out["workers"].push_back({{"id", w.id},
                                {"host", w.host},
                                {"role", w.role},
                                {"pid", w.pid},
                                {"devices", w.devices},
                                {"queue", w.queue},
                                {"state", LiveWorker(w) || w.state != "running" ? w.state : "lost"},
                                {"jobs_done", w.jobs_done},
                                {"started_at", w.started_at},
                                {"heartbeat_at", w.heartbeat_at},
                                {"heartbeat_age_s", w.heartbeat_age_s},
                                {"info", w.info}});
    }
    for (const auto& [name, state] : queues) {
      out["queues"][name] =
          state ? nlohmann::json{{"messages", state->messages}, {"consumers", state->consumers}}
                : nlohmann::json(nullptr);
    }
    for (const RunInfo& r : runs) {
      RunStats s = store->Stats(r.name);
      out["runs"].push_back({{"name", r.name},
                             {"task", r.task},
                             {"device", r.device},
                             {"evaluations", s.evaluations},
                             {"proposals", s.proposals},
                             {"last_evaluation_at", s.last_evaluation_at},
                             {"finished", s.Finished()}});
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  fmt::print("workers{}\n", workers.empty() ? "     none has sent a heartbeat to this store" : "");
  for (const WorkerRecord& w : workers) {
    std::string devices;
    for (const auto& d : w.devices)
      devices += (devices.empty() ? "" : ", ") + DeviceInfoFromJson(d).Label();
    std::string state = LiveWorker(w) || w.state != "running" ? w.state : "lost";
    fmt::print("  {:<28} {:<4} {:<9} {:>6} jobs  heartbeat {:.0f} s ago  {}\n", w.id, w.role, state,
               w.jobs_done, w.heartbeat_age_s, devices);
    if (w.info.contains("failure"))
      fmt::print("    failed: {}\n", w.info["failure"].get<std::string>());
  }
  if (!queues.empty()) fmt::print("queues\n");
  for (const auto& [name, state] : queues) {
    if (state)
      fmt::print("  {:<64} {:>6} waiting  {} consumer{}\n", name, state->messages, state->consumers,
                 state->consumers == 1 ? "" : "s");
    else
      fmt::print("  {:<64} not declared\n", name);
  }
  fmt::print("runs{}\n", runs.empty() ? "        none" : "");
  for (const RunInfo& r : runs) {
    RunStats s = store->Stats(r.name);
    fmt::print("  {:<32} {:<16} {:>6} evaluations  {}\n", r.name, r.task, s.evaluations,
               s.Finished() ? "finished" : "last evaluation " + s.last_evaluation_at);
  }
  return 0;
}

}  // namespace kf
