// The remote judge and the run worker against a real RabbitMQ on loopback, with a judge that
// answers from a table instead of a device (the end-to-end runs on PoCL are in
// cluster_cli_test.cpp): every job's verdict comes back once, a duplicate is dropped, a job that
// killed its workers becomes `crash`, a worker that cannot judge gives its job back and stops.
// And the propose worker: commands and chat requests done there, with the worker's own key.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "core/identity.hpp"
#include "core/kernel.hpp"
#include "core/task_bundle.hpp"
#include "core/task_library.hpp"
#include "dist/build_worker.hpp"
#include "dist/heartbeat.hpp"
#include "dist/propose_worker.hpp"
#include "dist/queue_names.hpp"
#include "dist/remote_judge.hpp"
#include "dist/remote_propose.hpp"
#include "dist/run_worker.hpp"
#include "host/fake_judge.hpp"
#include "local_broker.hpp"
#include "propose/builtin/builtin_proposer.hpp"
#include "propose/command/command_proposer.hpp"
#include "search/classifier.hpp"
#include "search/search_loop.hpp"
#include "store/store.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Answers every candidate at once: `ok`, its time the configuration's value of T (1 by default).
class TableJudge : public Judge {
 public:
  void Submit(Candidate candidate, Done done, int /*pinned*/) override {
    ++submitted;
    RunReply reply;
    reply.key = candidate.key;
    reply.evaluation.status = Status::kOk;
    reply.evaluation.config = candidate.config;
    reply.evaluation.time = TimingStats{1, 1, 1, 5};
    done(std::move(reply));
  }
  int runner_count() const override { return 1; }
  std::atomic<int> submitted{0};
};

// Records the candidates that came built, with their artifacts, and judges them as TableJudge.
class BuiltJudge : public TableJudge {
 public:
  void SubmitBuilt(Candidate candidate, const CompileResult& built, Done done) override {
    {
      std::lock_guard lock(mu);
      artifacts[candidate.key] =
          built.ok ? std::string(reinterpret_cast<const char*>(built.artifact.binary.data()),
                                 built.artifact.binary.size())
                   : "failed: " + built.log;
    }
    Submit(std::move(candidate), std::move(done), -1);
  }
  std::mutex mu;
  std::map<std::string, std::string> artifacts;
};

class Cluster : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (test::LocalBroker::Available()) broker_ = std::make_unique<test::LocalBroker>();
  }
  static void TearDownTestSuite() { broker_.reset(); }

  void SetUp() override {
    if (!broker_) GTEST_SKIP() << "rabbitmq-server is not installed (scripts/setup.sh --tests)";
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    name_ = QueueSlug(info->name());
    dir_ =
        fs::temp_directory_path() / ("kf-cluster-test-" + name_ + "-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    store_ = OpenStore("sqlite:" + (dir_ / "store.db").string());
    task_ = FindTask(std::string(KF_TASKS) + "/softmax_rows");
    bundle_ = PackTaskFolder(task_.dir, task_.name);
    store_->PutTaskBundle(bundle_);
    device_.backend = "opencl";
    device_.arch = "test";
    device_.name = "table " + name_;
    kernel_ = LoadKernelFile(std::string(KF_TASKS) + "/softmax_rows/baseline.cl");
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  static std::unique_ptr<AmqpClient> Client() {
    return std::make_unique<AmqpClient>(broker_->Url());
  }

  RemoteJudgeOptions JudgeOptions() const {
    RemoteJudgeOptions o;
    o.run = "run-" + name_;
    o.task_id = bundle_.id;
    o.task_name = task_.name;
    o.run_queue = RunQueueName(device_);
    o.devices = [] { return 1; };
    return o;
  }

  RunWorkerOptions WorkerOptions(const std::string& id) const {
    RunWorkerOptions o;
    o.id = id;
    o.host = "test";
    o.devices = {device_};
    o.cache_dir = (dir_ / "cache").string();
    o.heartbeat_s = 0.5;
    return o;
  }

  Candidate ACandidate(const std::string& key) const {
    Candidate c;
    c.kernel = kernel_;
    c.key = key;
    return c;
  }

  static std::unique_ptr<test::LocalBroker> broker_;
  std::string name_;
  fs::path dir_;
  std::unique_ptr<Store> store_;
  Task task_;
  TaskBundle bundle_;
  DeviceInfo device_;
  Kernel kernel_;
};

std::unique_ptr<test::LocalBroker> Cluster::broker_;

// A worker serving on a thread of its own, stopped and joined however the test ends.
template <class Worker>
class Serving {
 public:
  explicit Serving(Worker& worker) : thread_([this, &worker] { failure_ = worker.Serve(stop_); }) {}
  ~Serving() { Stop(); }
  // Stops it (a drain) and returns what Serve returned.
  std::string Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return failure_;
  }
  // Waits for it to stop on its own.
  std::string Join() {
    if (thread_.joinable()) thread_.join();
    return failure_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::string failure_ = "not returned";
  std::thread thread_;  // last: started once the rest is built
};

// Collects verdicts by key, counting each key's calls.
struct Verdicts {
  std::mutex mu;
  std::map<std::string, std::vector<RunReply>> by_key;
  Judge::Done For() {
    return [this](RunReply r) {
      std::lock_guard lock(mu);
      by_key[r.key].push_back(std::move(r));
    };
  }
  size_t Keys() {
    std::lock_guard lock(mu);
    return by_key.size();
  }
  bool WaitFor(size_t keys, seconds limit) {
    auto end = std::chrono::steady_clock::now() + limit;
    while (Keys() < keys && std::chrono::steady_clock::now() < end)
      std::this_thread::sleep_for(milliseconds(20));
    return Keys() >= keys;
  }
};

TEST_F(Cluster, EveryJobsVerdictComesBackOnceAndADuplicateIsDropped) {
  auto coordinator = Client();
  RemoteJudge judge(*coordinator, *store_, JudgeOptions());
  auto worker_client = Client();
  TableJudge* table = nullptr;
  RunWorker worker(
      *worker_client, *store_,
      [&](const Task& task, const std::string&, const EvalSettings&) {
        EXPECT_EQ(task.id, bundle_.id);  // the task came from the store's bundle
        auto j = std::make_unique<TableJudge>();
        table = j.get();
        return j;
      },
      WorkerOptions("test:1:run"));
  Serving serving(worker);

  Verdicts verdicts;
  for (int i = 0; i < 20; ++i) judge.Submit(ACandidate("k" + std::to_string(i)), verdicts.For());
  ASSERT_TRUE(verdicts.WaitFor(20, seconds(30)));
  for (const auto& [key, replies] : verdicts.by_key) {
    ASSERT_EQ(replies.size(), 1u) << key;
    EXPECT_EQ(replies[0].evaluation.status, Status::kOk) << key;
  }
  EXPECT_EQ(judge.pending(), 0);
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->submitted.load(), 20);

  // A second result for a key already answered (a job judged twice) is dropped.
  RunResultMessage again;
  again.run = JudgeOptions().run;
  again.worker = "elsewhere";
  again.reply.key = "k3";
  coordinator->Publish(ResultsQueueName(again.run), RunResultMessageToJson(again).dump());
  auto end = std::chrono::steady_clock::now() + seconds(10);
  while (judge.duplicates_dropped() == 0 && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(judge.duplicates_dropped(), 1);
  EXPECT_EQ(verdicts.by_key["k3"].size(), 1u);

  std::vector<RunnerStats> stats = judge.worker_stats();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].device, "test:1:run");
  EXPECT_EQ(stats[0].jobs, 20);

  EXPECT_EQ(serving.Stop(), "");
  std::vector<WorkerRecord> workers = store_->Workers();
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(workers[0].id, "test:1:run");
  EXPECT_EQ(workers[0].state, "stopped");
  EXPECT_EQ(workers[0].jobs_done, 20);
  EXPECT_EQ(workers[0].queue, RunQueueName(device_));
}

TEST_F(Cluster, AJobThatKilledItsWorkersIsAnsweredCrashAndNotRunAgain) {
  auto coordinator = Client();
  RemoteJudge judge(*coordinator, *store_, JudgeOptions());
  Verdicts verdicts;
  judge.Submit(ACandidate("deadly"), verdicts.For());
  // kRunAttempts workers take it and die with it.
  for (int i = 0; i < kRunAttempts; ++i) {
    auto dying = Client();
    dying->Consume(RunQueueName(device_), 1);
    std::optional<Delivery> d = dying->Next(seconds(10));
    ASSERT_TRUE(d.has_value()) << "delivery " << i;
    EXPECT_EQ(d->delivery_count, i);
  }
  auto worker_client = Client();
  int judges_made = 0;
  RunWorker worker(
      *worker_client, *store_,
      [&](const Task&, const std::string&, const EvalSettings&) {
        ++judges_made;
        return std::make_unique<TableJudge>();
      },
      WorkerOptions("test:2:run"));
  Serving serving(worker);
  ASSERT_TRUE(verdicts.WaitFor(1, seconds(30)));
  EXPECT_EQ(serving.Stop(), "");
  ASSERT_EQ(verdicts.by_key["deadly"].size(), 1u);
  const Evaluation& ev = verdicts.by_key["deadly"][0].evaluation;
  EXPECT_EQ(ev.status, Status::kCrash);
  EXPECT_NE(ev.reason.find(std::to_string(kRunAttempts) + " workers took this candidate"),
            std::string::npos)
      << ev.reason;
  EXPECT_EQ(judges_made, 0);  // not run again
}

TEST_F(Cluster, AWorkerThatCannotJudgeGivesTheJobBackAndStops) {
  auto coordinator = Client();
  RemoteJudge judge(*coordinator, *store_, JudgeOptions());
  Verdicts verdicts;
  auto broken_client = Client();
  RunWorker broken(
      *broken_client, *store_,
      [](const Task&, const std::string&, const EvalSettings&) -> std::unique_ptr<Judge> {
        throw std::runtime_error("the executor cannot start: no device");
      },
      WorkerOptions("test:3:run"));
  Serving broken_serving(broken);
  judge.Submit(ACandidate("given-back"), verdicts.For());
  const std::string failure = broken_serving.Join();  // it stops on its own
  EXPECT_NE(failure.find("the executor cannot start: no device"), std::string::npos) << failure;
  EXPECT_EQ(verdicts.Keys(), 0u);  // the failure is not a verdict

  auto good_client = Client();
  RunWorker good(
      *good_client, *store_,
      [](const Task&, const std::string&, const EvalSettings&) {
        return std::make_unique<TableJudge>();
      },
      WorkerOptions("test:4:run"));
  Serving good_serving(good);
  ASSERT_TRUE(verdicts.WaitFor(1, seconds(30)));
  EXPECT_EQ(good_serving.Stop(), "");
  EXPECT_EQ(verdicts.by_key["given-back"].at(0).evaluation.status, Status::kOk);

  std::map<std::string, WorkerRecord> workers;
  for (WorkerRecord& w : store_->Workers()) workers[w.id] = w;
  ASSERT_EQ(workers.count("test:3:run"), 1u);
  EXPECT_EQ(workers["test:3:run"].state, "stopped");
  EXPECT_NE(workers["test:3:run"].info.value("failure", "").find("no device"), std::string::npos);
  EXPECT_EQ(workers["test:4:run"].jobs_done, 1);
}

TEST_F(Cluster, AJobForATaskTheStoreLacksStopsTheWorkerSayingWhich) {
  auto coordinator = Client();
  RemoteJudgeOptions o = JudgeOptions();
  o.task_id = "t0000000000000000ffffffffffffffff";
  RemoteJudge judge(*coordinator, *store_, o);
  Verdicts verdicts;
  judge.Submit(ACandidate("orphan"), verdicts.For());
  auto worker_client = Client();
  RunWorker worker(
      *worker_client, *store_,
      [](const Task&, const std::string&, const EvalSettings&) {
        return std::make_unique<TableJudge>();
      },
      WorkerOptions("test:5:run"));
  const std::string failure = Serving(worker).Join();
  EXPECT_NE(failure.find("t0000000000000000ffffffffffffffff"), std::string::npos) << failure;
  EXPECT_NE(failure.find("not in the store"), std::string::npos) << failure;
  judge.CancelPending();  // the job stays queued for a worker that has the task
  ASSERT_EQ(verdicts.by_key["orphan"].size(), 1u);
  EXPECT_TRUE(verdicts.by_key["orphan"][0].cancelled);
}

TEST_F(Cluster, WithABuildWorkerJobsAreCompiledThereAndRunWithTheirArtifacts) {
  auto coordinator = Client();
  RemoteJudgeOptions o = JudgeOptions();
  o.build_queue = BuildQueueName("test-" + name_);
  o.target = device_;
  RemoteJudge judge(*coordinator, *store_, o);

  auto builder_client = Client();
  BuildWorkerOptions bo;
  bo.id = "test:7:build";
  bo.host = "test";
  bo.backend = "test-" + name_;
  bo.heartbeat_s = 0.5;
  std::atomic<int> compiled{0};
  BuildWorker builder(
      *builder_client, *store_,
      [&](const DeviceInfo& target, CompileRequest request,
          std::function<void(std::optional<CompileResult>)> done) {
        EXPECT_EQ(target.name, device_.name);  // built for the kind that runs it
        ++compiled;
        CompileResult r;
        r.ok = request.defines.empty() || request.defines[0].second != "7";
        r.log = "error: seven";
        const std::string binary = "binary of " + request.entries.front();
        for (char c : binary) r.artifact.binary.push_back(static_cast<std::byte>(c));
        std::thread([r = std::move(r), done = std::move(done)]() mutable {
          done(std::move(r));
        }).detach();  // answered on another thread, as a builder pool does
      },
      bo);
  std::atomic<bool> stop_builder{false};
  std::thread building([&] { builder.Serve(stop_builder); });

  auto worker_client = Client();
  BuiltJudge* built = nullptr;
  RunWorker worker(
      *worker_client, *store_,
      [&](const Task&, const std::string&, const EvalSettings&) {
        auto j = std::make_unique<BuiltJudge>();
        built = j.get();
        return j;
      },
      WorkerOptions("test:8:run"));
  Serving serving(worker);

  Verdicts verdicts;
  for (int i = 0; i < 10; ++i) {
    Candidate c = ACandidate("b" + std::to_string(i));
    c.config = {{"I", std::to_string(i)}};
    judge.Submit(std::move(c), verdicts.For());
  }
  const bool all = verdicts.WaitFor(10, seconds(30));
  EXPECT_EQ(serving.Stop(), "");
  stop_builder = true;
  building.join();
  ASSERT_TRUE(all);
  EXPECT_EQ(compiled.load(), 10);
  ASSERT_NE(built, nullptr);
  ASSERT_EQ(built->artifacts.size(), 10u);  // every one came built, none compiled by the runner
  EXPECT_EQ(built->artifacts["b3"], "binary of " + kernel_.launches.front().entry);
  EXPECT_EQ(built->artifacts["b7"], "failed: error: seven");  // its compile error travelled too
  EXPECT_EQ(builder.jobs_done(), 10);
  bool heartbeat = false;
  for (const WorkerRecord& w : store_->Workers())
    heartbeat = heartbeat || (w.id == "test:7:build" && w.role == "build" && w.jobs_done == 10);
  EXPECT_TRUE(heartbeat);
}

// Judges as TableJudge after a pause, counting what it ran: a slow queue behind it.
class SlowJudge : public TableJudge {
 public:
  void Submit(Candidate candidate, Done done, int pinned) override {
    std::this_thread::sleep_for(milliseconds(200));
    TableJudge::Submit(std::move(candidate), std::move(done), pinned);
  }
};

TEST_F(Cluster, AWorkerSkipsTheQueuedJobsOfACancelledJudgeAndRunsLaterOnes) {
  auto coordinator = Client();
  RemoteJudge judge(*coordinator, *store_, JudgeOptions());
  Verdicts verdicts;
  constexpr int kQueued = 10;
  for (int i = 0; i < kQueued; ++i)
    judge.Submit(ACandidate("q" + std::to_string(i)), verdicts.For());

  auto worker_client = Client();
  std::atomic<SlowJudge*> slow{nullptr};
  RunWorker worker(
      *worker_client, *store_,
      [&](const Task&, const std::string&, const EvalSettings&) {
        auto j = std::make_unique<SlowJudge>();
        slow = j.get();
        return j;
      },
      WorkerOptions("test:9:run"));
  Serving serving(worker);
  auto ran = [&] { return slow.load() ? slow.load()->submitted.load() : 0; };
  auto end = std::chrono::steady_clock::now() + seconds(30);
  while (ran() < 1 && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(milliseconds(5));
  ASSERT_GE(ran(), 1);
  judge.CancelPending();  // the search ended: the rest is answered `cancelled` here...
  const int ran_at_cancel = ran();
  ASSERT_EQ(verdicts.Keys(), static_cast<size_t>(kQueued));

  // ...and skipped there: the worker goes through the queue without running them.
  end = std::chrono::steady_clock::now() + seconds(30);
  while (ran() + worker.jobs_skipped() < kQueued && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(ran() + worker.jobs_skipped(), kQueued);
  EXPECT_LE(ran(), ran_at_cancel + 1);  // at most the one it was taking then
  EXPECT_GE(worker.jobs_skipped(), kQueued - ran_at_cancel - 1);

  // A job sent after the cancellation (a re-verification) runs.
  judge.Submit(ACandidate("after"), verdicts.For());
  ASSERT_TRUE(verdicts.WaitFor(kQueued + 1, seconds(30)));
  EXPECT_EQ(serving.Stop(), "");
  EXPECT_EQ(verdicts.by_key["after"].at(0).evaluation.status, Status::kOk);
  EXPECT_FALSE(verdicts.by_key["after"].at(0).cancelled);
  for (const auto& [key, replies] : verdicts.by_key) EXPECT_EQ(replies.size(), 1u) << key;
}

TEST_F(Cluster, ABuildWorkerDoesNotCompileCancelledJobs) {
  auto coordinator = Client();
  RemoteJudgeOptions o = JudgeOptions();
  o.build_queue = BuildQueueName("test-" + name_);
  o.target = device_;
  RemoteJudge judge(*coordinator, *store_, o);
  Verdicts verdicts;
  for (int i = 0; i < 4; ++i) judge.Submit(ACandidate("c" + std::to_string(i)), verdicts.For());
  judge.CancelPending();

  auto builder_client = Client();
  BuildWorkerOptions bo;
  bo.id = "test:10:build";
  bo.host = "test";
  bo.backend = "test-" + name_;
  bo.heartbeat_s = 0.5;
  std::atomic<int> compiled{0};
  BuildWorker builder(
      *builder_client, *store_,
      [&](const DeviceInfo&, CompileRequest,
          std::function<void(std::optional<CompileResult>)> done) {
        ++compiled;
        done(std::nullopt);
      },
      bo);
  Serving serving(builder);
  auto end = std::chrono::steady_clock::now() + seconds(30);
  while (builder.jobs_skipped() < 4 && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(serving.Stop(), "");
  EXPECT_EQ(builder.jobs_skipped(), 4);
  EXPECT_EQ(compiled.load(), 0);
  EXPECT_EQ(builder.jobs_done(), 0);
}

// The own queues of the live run workers, as their heartbeats name them (what the coordinator
// reads).
std::vector<std::string> OwnQueues(Store& store) {
  std::vector<std::string> out;
  for (const WorkerRecord& w : store.Workers())
    if (w.role == "run" && LiveWorker(w) && w.info.contains("own_queue"))
      out.push_back(w.info["own_queue"].get<std::string>());
  return out;
}

TEST_F(Cluster, PinnedJobsAllRunOnOneWorkerOfTheKind) {
  auto coordinator = Client();
  RemoteJudgeOptions o = JudgeOptions();
  o.worker_queues = [this] { return OwnQueues(*store_); };
  RemoteJudge judge(*coordinator, *store_, o);
  auto factory = [](const Task&, const std::string&, const EvalSettings&) {
    return std::make_unique<SlowJudge>();
  };
  auto a_client = Client();
  auto b_client = Client();
  RunWorker a(*a_client, *store_, factory, WorkerOptions("test:11:run"));
  RunWorker b(*b_client, *store_, factory, WorkerOptions("test:12:run"));
  Serving a_serving(a);
  Serving b_serving(b);
  auto end = std::chrono::steady_clock::now() + seconds(30);
  while (OwnQueues(*store_).size() < 2 && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(milliseconds(20));
  ASSERT_EQ(OwnQueues(*store_).size(), 2u);

  Verdicts verdicts;
  for (int i = 0; i < 6; ++i) judge.Submit(ACandidate("r" + std::to_string(i)), verdicts.For(), 0);
  ASSERT_TRUE(verdicts.WaitFor(6, seconds(30)));
  std::vector<RunnerStats> by_worker = judge.worker_stats();
  ASSERT_EQ(by_worker.size(), 1u);  // every repeat on one worker, not on whichever took it
  EXPECT_EQ(by_worker[0].jobs, 6);
  EXPECT_EQ(a.jobs_done() + b.jobs_done(), 6);
  EXPECT_TRUE(a.jobs_done() == 0 || b.jobs_done() == 0);
  EXPECT_EQ(a_serving.Stop(), "");
  EXPECT_EQ(b_serving.Stop(), "");
}

TEST_F(Cluster, APinnedJobWhoseWorkerIsGoneGoesToAnyWorkerOfTheKind) {
  auto coordinator = Client();
  const std::string ghost = WorkerQueueName(RunQueueName(device_), "test:13:run");
  DeclareSettled(*coordinator, RunQueueSpec(ghost));  // a worker's queue, and no worker on it
  std::atomic<bool> ghost_alive{true};
  RemoteJudgeOptions o = JudgeOptions();
  o.worker_queues = [&] {
    return ghost_alive ? std::vector<std::string>{ghost} : std::vector<std::string>{};
  };
  o.recheck_s = 0.2;
  RemoteJudge judge(*coordinator, *store_, o);
  Verdicts verdicts;
  judge.Submit(ACandidate("stranded"), verdicts.For(), 0);
  auto worker_client = Client();
  RunWorker worker(
      *worker_client, *store_,
      [](const Task&, const std::string&, const EvalSettings&) {
        return std::make_unique<TableJudge>();
      },
      WorkerOptions("test:14:run"));
  Serving serving(worker);
  EXPECT_FALSE(verdicts.WaitFor(1, seconds(1)));  // waiting for its worker
  ghost_alive = false;
  ASSERT_TRUE(verdicts.WaitFor(1, seconds(30)));
  EXPECT_EQ(verdicts.by_key["stranded"].at(0).evaluation.status, Status::kOk);
  EXPECT_EQ(serving.Stop(), "");
  EXPECT_EQ(worker.jobs_done(), 1);
}

// What a run found, compared without the store's order: each proposal's kernel and final state,
// the candidates judged with their statuses, the archive's cells, and the best.
struct Found {
  std::map<int, std::string> proposals;
  std::set<std::string> candidates;
  std::map<std::string, std::string> cells;
  std::string best;
  bool operator==(const Found&) const = default;
};

Found Read(Store& store, const std::string& run) {
  Found f;
  for (const ProposalRecord& r : store.RunProposals(run))
    f.proposals[r.index] = (r.proposal ? KernelId(r.proposal->kernel) : std::string("-")) + " " +
                           std::string(ProposalStateName(r.state));
  for (const StoredEvaluation& e : store.RunEvaluations(run))
    f.candidates.insert(e.candidate_id + " " + std::string(StatusName(e.evaluation.status)));
  double best = 0;
  for (const ArchiveEntry& a : store.Archive(run)) {
    f.cells[nlohmann::json(a.cell).dump()] = a.candidate_id;
    if (a.speedup > best) {
      best = a.speedup;
      f.best = a.candidate_id;
    }
  }
  return f;
}

TEST_F(Cluster, OneProposalInFlightFindsWhatTheEmbeddedSearchFindsForTheSeed) {
  Task rope = FindTask(std::string(KF_TASKS) + "/rope_llama3");
  store_->PutTaskBundle(PackTaskFolder(rope.dir, rope.name));
  DescriptorSpace descriptors = DescriptorSpace::Load(KF_DESCRIPTORS);
  SearchSettings s;
  s.devices = "fake";
  s.device = FakeDevice();
  s.policy.budget = 40;
  s.policy.tune_budget = 3;
  s.policy.in_flight = 1;
  s.policy.seed = 11;
  s.device_env.Set("max_work_group_size", 1024);
  for (const char* k : {"B", "S", "Hq", "Hkv", "D"}) s.device_env.Set(k, 64);
  auto search = [&](Store& store, Judge& judge, const std::string& run) {
    BuiltinProposer proposer(rope, Language::kOpenCL, [&](const Kernel& k) {
      return descriptors.Classify(k.language, k.source, "");
    });
    SearchSettings settings = s;
    settings.run = run;
    store.OpenRun({run, rope.name, s.devices, {}, ""});
    return RunSearch(rope, proposer, judge, store, descriptors, settings);
  };

  std::unique_ptr<Store> embedded = OpenStore("sqlite:" + (dir_ / "embedded.db").string());
  FakeJudge local;
  SearchResult alone = search(*embedded, local, "same");

  auto coordinator = Client();
  RemoteJudgeOptions o = JudgeOptions();
  o.run = "same";
  o.task_id = PackTaskFolder(rope.dir, rope.name).id;
  o.task_name = rope.name;
  o.run_queue = RunQueueName(FakeDevice());
  RemoteJudge remote(*coordinator, *store_, o);
  auto worker_client = Client();
  RunWorkerOptions w = WorkerOptions("test:6:run");
  w.devices = {FakeDevice()};
  RunWorker worker(
      *worker_client, *store_,
      [](const Task&, const std::string&, const EvalSettings&) {
        return std::make_unique<FakeJudge>();
      },
      w);
  Serving serving(worker);
  SearchResult distributed = search(*store_, remote, "same");
  EXPECT_EQ(serving.Stop(), "");

  EXPECT_EQ(alone.evaluations, 40);
  EXPECT_EQ(distributed.evaluations, alone.evaluations);
  EXPECT_EQ(distributed.stop_reason, alone.stop_reason);
  Found a = Read(*embedded, "same"), b = Read(*store_, "same");
  EXPECT_EQ(a.proposals, b.proposals);
  EXPECT_EQ(a.candidates, b.candidates);
  EXPECT_EQ(a.cells, b.cells);
  EXPECT_EQ(a.best, b.best);
  EXPECT_FALSE(a.best.empty());
}

// Answers every chat request with the last message reversed, recording the model it was given.
class MirrorChat : public ChatService {
 public:
  ChatReply Complete(const ModelSettings& model,
                     const std::vector<ChatMessage>& messages) override {
    std::lock_guard lock(mu);
    models.push_back(model);
    ChatReply r;
    r.ok = true;
    r.content = std::string(messages.back().content.rbegin(), messages.back().content.rend());
    r.prompt_tokens = 3;
    return r;
  }
  std::mutex mu;
  std::vector<ModelSettings> models;
};

// Counts the commands it is asked to run, and runs none.
class CountingCommands : public CommandService {
 public:
  CommandRun Run(const std::string&, const std::string&, double, size_t,
                 const std::string&) override {
    ++runs;
    return {"ran", ""};
  }
  std::atomic<int> runs{0};
};

ProposeWorkerOptions ProposeOptions(const std::string& id) {
  ProposeWorkerOptions o;
  o.id = id;
  o.host = "test";
  o.concurrency = 2;
  o.heartbeat_s = 0.5;
  return o;
}

TEST_F(Cluster, AProposeWorkerRunsCommandsAndAsksModelsWithItsOwnKey) {
  auto coordinator = Client();
  RemoteProposeOptions po;
  po.run = "run-" + name_;
  RemoteProposeEffects effects(*coordinator, po);
  auto worker_client = Client();
  MirrorChat chat;
  ProposeWorkerOptions o = ProposeOptions("test:1:propose");
  o.api_key = "worker-key";
  ModelSettings held;  // a model this worker holds: its own URL and key
  held.name = "held";
  held.base_url = "http://10.0.0.7:8000/v1";
  held.model = "coder";
  held.api_key = "held-key";
  o.models = {held};
  o.chat = &chat;
  ProposeWorker worker(*worker_client, *store_, o);
  Serving serving(worker);

  // A command runs on the worker (for real: /bin/sh), its stdin the request.
  CommandRun run = effects.Run("tr a-z A-Z", "a request\n", 30, 1 << 20, "p1");
  EXPECT_EQ(run.failure, "");
  EXPECT_EQ(run.out, "A REQUEST\n");
  CommandRun failing = effects.Run("exit 3", "", 30, 1 << 20, "p2");
  EXPECT_NE(failing.failure.find("exited with code 3"), std::string::npos) << failing.failure;

  // A chat request: the coordinator's key never travels; the worker's goes with it.
  ModelSettings asked;
  asked.base_url = "http://coordinator.example/v1";
  asked.model = "m";
  asked.api_key = "coordinator-key";
  ChatReply reply = effects.Complete(asked, {{"system", "s"}, {"user", "olleh"}});
  EXPECT_TRUE(reply.ok) << reply.error;
  EXPECT_EQ(reply.content, "hello");
  EXPECT_EQ(reply.prompt_tokens, 3);
  ModelSettings by_label;  // names the worker's model: its URL and key are used
  by_label.name = "held";
  by_label.base_url = "http://coordinator.example/v1";
  by_label.model = "coder";
  EXPECT_TRUE(effects.Complete(by_label, {{"user", "x"}}).ok);
  ASSERT_EQ(chat.models.size(), 2u);
  EXPECT_EQ(chat.models[0].api_key, "worker-key");
  EXPECT_EQ(chat.models[0].base_url, "http://coordinator.example/v1");
  EXPECT_EQ(chat.models[1].api_key, "held-key");
  EXPECT_EQ(chat.models[1].base_url, "http://10.0.0.7:8000/v1");

  EXPECT_EQ(serving.Stop(), "");
  EXPECT_EQ(worker.jobs_done(), 4);
  std::vector<WorkerRecord> workers = store_->Workers();
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(workers[0].role, "propose");
  EXPECT_EQ(workers[0].state, "stopped");
  EXPECT_EQ(workers[0].jobs_done, 4);
  EXPECT_EQ(workers[0].queue, kProposeQueue);
}

// A coordinator started before any propose worker runs its proposer's commands itself; one
// that joins while the search goes gets them from then on.
TEST_F(Cluster, AProposeWorkerThatJoinsLaterGetsTheCommandsFromThenOn) {
  auto coordinator = Client();
  RemoteProposeOptions po;
  po.run = "run-" + name_;
  po.workers = [this] { return LiveWorkers(*store_, "propose"); };
  po.recheck_s = 0.2;
  RemoteProposeEffects effects(*coordinator, po);
  const fs::path here = dir_ / "ran-here";
  CommandProposer proposer(task_, {"touch " + here.string(), 30, 1 << 20, &effects});
  ProposalRequest request;
  request.task_id = task_.id;
  proposer.Propose(request);
  EXPECT_TRUE(fs::exists(here));  // no worker yet: here
  fs::remove(here);

  auto worker_client = Client();
  CountingCommands commands;
  ProposeWorkerOptions o = ProposeOptions("test:3:propose");
  o.commands = &commands;
  ProposeWorker worker(*worker_client, *store_, o);
  Serving serving(worker);
  auto end = std::chrono::steady_clock::now() + seconds(30);
  while (!effects.Available() && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(milliseconds(50));
  ASSERT_TRUE(effects.Available());
  request.index = 1;
  proposer.Propose(request);
  EXPECT_EQ(commands.runs.load(), 1);  // on the worker that joined
  EXPECT_FALSE(fs::exists(here));
  EXPECT_EQ(serving.Stop(), "");
  EXPECT_EQ(effects.done(), 1);
}

TEST_F(Cluster, AProposeJobThatKilledItsWorkersComesBackFailedAndIsNotDoneAgain) {
  auto coordinator = Client();
  RemoteProposeOptions po;
  po.run = "run-" + name_;
  RemoteProposeEffects effects(*coordinator, po);
  std::thread caller;
  CommandRun run;
  caller = std::thread([&] { run = effects.Run("echo never", "", 30, 1 << 20, "p1"); });
  for (int i = 0; i < kRunAttempts; ++i) {  // workers that take it and die with it
    auto dying = Client();
    dying->Consume(kProposeQueue, 1);
    std::optional<Delivery> d = dying->Next(seconds(10));
    ASSERT_TRUE(d.has_value()) << "delivery " << i;
    EXPECT_EQ(d->delivery_count, i);
  }
  auto worker_client = Client();
  CountingCommands commands;
  ProposeWorkerOptions o = ProposeOptions("test:2:propose");
  o.commands = &commands;
  ProposeWorker worker(*worker_client, *store_, o);
  Serving serving(worker);
  caller.join();
  EXPECT_NE(run.failure.find(std::to_string(kRunAttempts) + " propose workers took this command"),
            std::string::npos)
      << run.failure;
  EXPECT_EQ(commands.runs.load(), 0);
}

TEST_F(Cluster, WithoutAProposeWorkerACallFailsAtItsDeadlineSayingSo) {
  auto coordinator = Client();
  RemoteProposeOptions po;
  po.run = "run-" + name_;
  po.grace_s = 0.5;
  po.chat_deadline_s = 0.5;
  po.worker_hint = "kfoundry worker --role propose";
  RemoteProposeEffects effects(*coordinator, po);
  CommandRun run = effects.Run("echo x", "", 0.5, 1 << 20, "p1");
  EXPECT_NE(run.failure.find("no propose worker answered within 1 s"), std::string::npos)
      << run.failure;
  EXPECT_NE(run.failure.find("kfoundry worker --role propose"), std::string::npos);
  ModelSettings m;
  m.base_url = "http://x/v1";
  m.model = "m";
  ChatReply reply = effects.Complete(m, {{"user", "x"}});
  EXPECT_FALSE(reply.ok);
  EXPECT_NE(reply.error.find("no propose worker answered"), std::string::npos) << reply.error;
}

}  // namespace
}  // namespace kf
