// The distributed roles end to end on PoCL: `kfoundry coordinator` with `kfoundry worker --role
// run` processes over a loopback RabbitMQ and a SQLite store. One worker is killed (SIGKILL) in
// the middle of the run: the run still ends with its whole budget judged and stored, each
// evaluation once. Skipped without rabbitmq-server or an OpenCL device.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <thread>

#include "../integration/kf_process.hpp"
#include "local_broker.hpp"
#include "store/store.hpp"

namespace kf {
namespace {

using testing::KfBinary;
using testing::RunKfoundry;
using testing::Scratch;

// A kfoundry process in the background, its stdout and stderr to files.
class Background {
 public:
  Background(const std::string& args, const std::string& out, const std::string& err)
      : out_(out), err_(err) {
    std::string cmd = fmt::format("KF_CACHE_DIR={} KF_TASKS_DIR={} exec {} {} >{} 2>{}",
                                  KF_TEST_CACHE, KF_TASKS, KfBinary(), args, out, err);
    pid_ = fork();
    if (pid_ == 0) {
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~Background() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      Wait(std::chrono::seconds(10));
    }
  }
  void Signal(int sig) { kill(pid_, sig); }
  pid_t pid() const { return pid_; }
  // The exit code, or -1 if it has not exited within `limit` (or died of a signal).
  int Wait(std::chrono::seconds limit) {
    auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return -1;
  }
  // Its command line as `ps` shows it (arguments NUL-separated).
  std::string CommandLine() const {
    return testing::ReadText(fmt::format("/proc/{}/cmdline", pid_));
  }
  std::string Out() const { return testing::ReadText(out_); }
  std::string Err() const { return testing::ReadText(err_); }

 private:
  std::string out_, err_;
  pid_t pid_ = -1;
  bool exited_ = false;
};

class ClusterCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (test::LocalBroker::Available() && testing::HasBackend("opencl"))
      broker_ = std::make_unique<test::LocalBroker>();
  }
  static void TearDownTestSuite() { broker_.reset(); }
  void SetUp() override {
    if (!test::LocalBroker::Available())
      GTEST_SKIP() << "rabbitmq-server is not installed (scripts/setup.sh --tests)";
    if (!broker_) GTEST_SKIP() << "no OpenCL device";
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = Scratch("cluster", info->name());
    store_ = "sqlite:" + dir_ + "/store.db";
    queue_ = fmt::format("amqp://kfoundry@127.0.0.1:{}/", broker_->port());
  }
  std::string WorkerArgs() const {
    return fmt::format("worker --role run --device opencl --store {} --queue {} --heartbeat 1",
                       store_, queue_);
  }

  static std::unique_ptr<test::LocalBroker> broker_;
  std::string dir_, store_, queue_;
};

std::unique_ptr<test::LocalBroker> ClusterCli::broker_;

// Polls the store until the run has `n` evaluations stored (or 180 s pass); the count reached.
long long WaitForEvaluations(const std::string& store, const std::string& run, long long n) {
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(180);
  long long stored = 0;
  while (stored < n && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    try {
      stored = OpenStore(store, /*must_exist=*/true)->Stats(run).evaluations;
    } catch (const std::exception&) {
      // not created yet
    }
  }
  return stored;
}

// The run's whole budget in the store, each evaluation once: as many search evaluations as the
// coordinator reports, the budget unless it says nothing was left to try, no key twice.
void ExpectTheBudgetStoredOnce(const std::string& store_url, const std::string& run,
                               const nlohmann::json& out, int budget) {
  std::vector<StoredEvaluation> all = OpenStore(store_url, true)->RunEvaluations(run);
  std::set<std::string> keys;
  int search = 0;
  for (const StoredEvaluation& e : all) {
    keys.insert(e.key);
    search += e.purpose == "search";
  }
  EXPECT_EQ(keys.size(), all.size());
  EXPECT_EQ(search, out["totals"]["evaluations"].get<int>());
  if (search < budget)
    EXPECT_NE(out["stop_reason"].get<std::string>().find("nothing left"), std::string::npos)
        << out["stop_reason"];
  else
    EXPECT_EQ(search, budget);
}

TEST_F(ClusterCli, ARunEndsWithItsWholeBudgetThoughAWorkerIsKilledInTheMiddle) {
  Background a(WorkerArgs(), dir_ + "/a.out", dir_ + "/a.err");
  Background b(WorkerArgs(), dir_ + "/b.out", dir_ + "/b.err");
  const int budget = 30;
  Background coordinator(
      fmt::format("coordinator softmax_rows --device opencl --budget {} --store {} --queue {} "
                  "--run dist1 --top 1 --repeats 2 --wait-workers 120 --json",
                  budget, store_, queue_),
      dir_ + "/coordinator.json", dir_ + "/coordinator.err");
  // Once a few verdicts are stored, one worker dies with the jobs it holds.
  ASSERT_GE(WaitForEvaluations(store_, "dist1", 5), 5) << coordinator.Err() << a.Err() << b.Err();
  // The broker's password is in no command line (ps shows them), log or the store.
  const char* password = std::getenv(kAmqpPasswordEnv);
  ASSERT_TRUE(password && *password);
  for (const Background* p : {&a, &b, &coordinator}) {
    EXPECT_NE(p->CommandLine().find("--queue"), std::string::npos);  // readable at all
    EXPECT_EQ(p->CommandLine().find(password), std::string::npos);
  }
  a.Signal(SIGKILL);
  ASSERT_EQ(coordinator.Wait(std::chrono::seconds(400)), 0) << coordinator.Err() << b.Err();

  nlohmann::json out = nlohmann::json::parse(coordinator.Out(), nullptr, false);
  ASSERT_TRUE(out.is_object()) << coordinator.Out() << coordinator.Err();
  ASSERT_FALSE(out["best"].is_null()) << coordinator.Err();
  EXPECT_EQ(out["best"]["status"], "ok");
  ExpectTheBudgetStoredOnce(store_, "dist1", out, budget);
  const int evaluations = out["totals"]["evaluations"].get<int>();
  // Verdicts came from the workers: the survivor judged some, the run's devices name the kind.
  EXPECT_NE(out["device"].get<std::string>().find("kf.run.opencl."), std::string::npos);
  ASSERT_TRUE(out["devices"].is_array());
  int judged = 0;
  for (const auto& d : out["devices"]) judged += d["evaluations"].get<int>();
  EXPECT_GE(judged, evaluations - 1);  // the baseline of a resumed run aside, all judged now

  // status names both workers; the survivor leaves on SIGTERM and says so.
  testing::KfResult status =
      RunKfoundry(fmt::format("status --store {} --queue {} --json", store_, queue_));
  ASSERT_EQ(status.exit_code, 0) << status.err;
  int run_workers = 0;
  for (const auto& w : status.json["workers"]) run_workers += w["role"] == "run";
  EXPECT_EQ(run_workers, 2);
  EXPECT_TRUE(status.json["queues"].contains("kf.dead"));
  b.Signal(SIGTERM);
  EXPECT_EQ(b.Wait(std::chrono::seconds(60)), 0) << b.Err();
  for (const std::string& text : {a.Err(), b.Err(), coordinator.Err(), coordinator.Out(),
                                  testing::ReadText(store_.substr(7)), status.out, status.err})
    EXPECT_EQ(text.find(password), std::string::npos);
  status = RunKfoundry(fmt::format("status --store {} --json", store_));
  bool b_stopped = false;
  for (const auto& w : status.json["workers"])
    b_stopped = b_stopped || (w["state"] == "stopped" && w["jobs_done"].get<int>() > 0);
  EXPECT_TRUE(b_stopped) << status.out;
}

TEST_F(ClusterCli, AKilledCoordinatorResumesAndTheRunEndsWithItsBudgetEachVerdictOnce) {
  Background worker(WorkerArgs(), dir_ + "/w.out", dir_ + "/w.err");
  const std::string run_args = fmt::format(
      "--store {} --queue {} --top 1 --repeats 1 --wait-workers 120 --json", store_, queue_);
  {
    Background first(fmt::format("coordinator softmax_rows --device opencl --budget 30 "
                                 "--run dist2 {}",
                                 run_args),
                     dir_ + "/first.json", dir_ + "/first.err");
    ASSERT_GE(WaitForEvaluations(store_, "dist2", 8), 8) << first.Err() << worker.Err();
    first.Signal(SIGKILL);  // with jobs out and verdicts on their way
    EXPECT_EQ(first.Wait(std::chrono::seconds(10)), -1);
  }
  Background again(fmt::format("coordinator --resume dist2 {}", run_args), dir_ + "/again.json",
                   dir_ + "/again.err");
  ASSERT_EQ(again.Wait(std::chrono::seconds(300)), 0) << again.Err() << worker.Err();
  EXPECT_NE(again.Err().find("resuming run dist2"), std::string::npos) << again.Err();
  nlohmann::json out = nlohmann::json::parse(again.Out(), nullptr, false);
  ASSERT_TRUE(out.is_object()) << again.Out();
  ExpectTheBudgetStoredOnce(store_, "dist2", out, 30);
  EXPECT_GT(out["totals"]["from_store"].get<int>(), 0);  // what was judged is not judged again
}

TEST_F(ClusterCli, ARunGoesOnWhenTheBrokerRestartsInTheMiddle) {
  Background worker(WorkerArgs(), dir_ + "/w.out", dir_ + "/w.err");
  Background coordinator(
      fmt::format("coordinator softmax_rows --device opencl --budget 30 --store {} --queue {} "
                  "--run dist3 --top 1 --repeats 1 --wait-workers 120 --json",
                  store_, queue_),
      dir_ + "/coordinator.json", dir_ + "/coordinator.err");
  ASSERT_GE(WaitForEvaluations(store_, "dist3", 5), 5) << coordinator.Err() << worker.Err();
  broker_->Stop();  // with jobs and verdicts on their way
  std::this_thread::sleep_for(std::chrono::seconds(2));
  broker_->Start();
  ASSERT_EQ(coordinator.Wait(std::chrono::seconds(400)), 0) << coordinator.Err() << worker.Err();
  nlohmann::json out = nlohmann::json::parse(coordinator.Out(), nullptr, false);
  ASSERT_TRUE(out.is_object()) << coordinator.Out();
  ExpectTheBudgetStoredOnce(store_, "dist3", out, 30);
  EXPECT_NE(worker.Err().find("reconnect"), std::string::npos) << worker.Err();
}

// Waits (up to 60 s) until `n` live workers of `role` have sent a heartbeat to the store.
bool WaitForWorkers(const std::string& store, const std::string& role, int n) {
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < end) {
    try {
      int live = 0;
      for (const WorkerRecord& w : OpenStore(store, true)->Workers())
        live += w.role == role && w.state == "running";
      if (live >= n) return true;
    } catch (const std::exception&) {
      // not created yet
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

// The command proposer's runs happen on two propose workers; one is killed with a slow command
// in hand, and its job is done by the other: no proposal is lost to it, the budget is spent.
TEST_F(ClusterCli, AProposeWorkerKilledWithACommandInHandLosesNoProposal) {
  Background run(WorkerArgs(), dir_ + "/run.out", dir_ + "/run.err");
  const std::string propose_args = fmt::format(
      "worker --role propose --store {} --queue {} --heartbeat 1 --concurrency 2", store_, queue_);
  Background a(propose_args, dir_ + "/a.out", dir_ + "/a.err");
  Background b(propose_args, dir_ + "/b.out", dir_ + "/b.err");
  ASSERT_TRUE(WaitForWorkers(store_, "propose", 2)) << a.Err() << b.Err();
  const int budget = 24;
  Background coordinator(
      fmt::format("coordinator softmax_rows --device opencl --budget {} --store {} --queue {} "
                  "--run dist4 --top 1 --repeats 1 --in-flight 2 --tune-budget 2 --wait-workers "
                  "120 --json --proposer command --proposer-cmd \"python3 {}/../examples/"
                  "proposers/param_walk.py --delay 1.5\"",
                  budget, store_, queue_, KF_TASKS),
      dir_ + "/coordinator.json", dir_ + "/coordinator.err");
  // Once some verdicts are stored, a dies while its heartbeat says it holds a command.
  ASSERT_GE(WaitForEvaluations(store_, "dist4", 6), 6) << coordinator.Err() << a.Err() << b.Err();
  const std::string a_id = fmt::format(":{}:propose", a.pid());
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool busy = false;
  while (!busy && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (const WorkerRecord& w : OpenStore(store_, true)->Workers())
      busy = busy || (w.id.find(a_id) != std::string::npos && w.info.value("busy", 0) > 0 &&
                      w.jobs_done > 0);
  }
  ASSERT_TRUE(busy) << "a never held a command: " << coordinator.Err() << a.Err();
  a.Signal(SIGKILL);
  ASSERT_EQ(coordinator.Wait(std::chrono::seconds(400)), 0) << coordinator.Err() << b.Err();
  EXPECT_NE(coordinator.Err().find("propose workers: 2 alive"), std::string::npos)
      << coordinator.Err();
  nlohmann::json out = nlohmann::json::parse(coordinator.Out(), nullptr, false);
  ASSERT_TRUE(out.is_object()) << coordinator.Out() << coordinator.Err();
  ExpectTheBudgetStoredOnce(store_, "dist4", out, budget);
  // No proposal failed for want of its worker: every command's reply came back.
  EXPECT_EQ(out["totals"]["proposal_states"].value("bad_reply", 0), 0) << out["totals"];
  const std::string b_id = fmt::format(":{}:propose", b.pid());
  long long b_jobs = 0;
  for (const WorkerRecord& w : OpenStore(store_, true)->Workers())
    if (w.id.find(b_id) != std::string::npos) b_jobs = w.jobs_done;
  EXPECT_GT(b_jobs, 0);
  b.Signal(SIGTERM);
  EXPECT_EQ(b.Wait(std::chrono::seconds(60)), 0) << b.Err();
}

// Every proposal of the run final (none left issued or being tuned), and the sum of the jobs its
// run workers say they did (their last heartbeats).
void ExpectEveryProposalFinal(const std::string& store, const std::string& run) {
  for (const ProposalRecord& p : OpenStore(store, true)->RunProposals(run))
    EXPECT_TRUE(p.Final()) << "proposal " << p.index << " " << ProposalStateName(p.state);
}
long long RunJobsDone(const std::string& store) {
  long long n = 0;
  for (const WorkerRecord& w : OpenStore(store, true)->Workers())
    n += w.role == "run" ? w.jobs_done : 0;
  return n;
}
size_t Evaluations(const std::string& store, const std::string& run) {
  return OpenStore(store, true)->RunEvaluations(run).size();
}

// Every role killed once in one run, on fake workers (verdicts at once, a fake CUDA device so
// that jobs go through a build worker): two run workers, a build worker and a propose worker
// with a slow command proposer; one run worker, the build worker, the propose worker and the
// coordinator are SIGKILLed mid-run (the dead roles but the run worker started again), and the
// broker restarted while the coordinator is down; the coordinator resumes. The run ends with
// its budget stored, 0 duplicated (one evaluation per key), 0 lost (as many evaluations as the
// same run uninterrupted, every proposal final), and re-executions within what the killed
// processes held.
TEST_F(ClusterCli, EveryRoleKilledMidRunLosesAndDuplicatesNothing) {
  const int budget = 160;
  auto roles = [&](const std::string& tag) {
    std::vector<std::unique_ptr<Background>> r;
    for (const char* args :
         {"--role run --fake --device cuda", "--role run --fake --device cuda",
          "--role build --fake --build-jobs 1", "--role propose --concurrency 2"})
      r.push_back(std::make_unique<Background>(
          fmt::format("worker {} --store {} --queue {} --heartbeat 1", args, store_, queue_),
          fmt::format("{}/{}{}.out", dir_, tag, r.size()),
          fmt::format("{}/{}{}.err", dir_, tag, r.size())));
    return r;
  };
  auto coordinator_args = [&](const std::string& run) {
    return fmt::format(
        "coordinator softmax_rows --device fake --budget {} --store {} --queue {} --run {} "
        "--top 1 --repeats 1 --in-flight 2 --seed 5 --wait-workers 120 --json --proposer "
        "command --proposer-cmd \"python3 {}/../examples/proposers/param_walk.py --delay 0.3 "
        "--templates\"",
        budget, store_, queue_, run, KF_TASKS);
  };
  auto stop_all = [](std::vector<std::unique_ptr<Background>>& r) {
    for (auto& p : r)
      if (p) p->Signal(SIGTERM);
    for (auto& p : r) {
      if (!p) continue;
      EXPECT_EQ(p->Wait(std::chrono::seconds(60)), 0) << p->Err();
    }
  };

  // The same run uninterrupted: no job done twice.
  {
    auto r = roles("ref");
    ASSERT_TRUE(WaitForWorkers(store_, "propose", 1));
    ASSERT_TRUE(WaitForWorkers(store_, "build", 1));
    Background c(coordinator_args("ref"), dir_ + "/ref.json", dir_ + "/ref.err");
    ASSERT_EQ(c.Wait(std::chrono::seconds(300)), 0) << c.Err();
    EXPECT_NE(c.Err().find("build workers: jobs are compiled on kf.build.cuda first"),
              std::string::npos)
        << c.Err();
    nlohmann::json out = nlohmann::json::parse(c.Out(), nullptr, false);
    ASSERT_TRUE(out.is_object()) << c.Out() << c.Err();
    ExpectTheBudgetStoredOnce(store_, "ref", out, budget);
    stop_all(r);
    EXPECT_EQ(RunJobsDone(store_), static_cast<long long>(Evaluations(store_, "ref")));
  }
  const long long before = RunJobsDone(store_);
  const size_t uninterrupted = Evaluations(store_, "ref");

  auto r = roles("chaos");
  ASSERT_TRUE(WaitForWorkers(store_, "propose", 1));
  ASSERT_TRUE(WaitForWorkers(store_, "build", 1));
  auto first = std::make_unique<Background>(coordinator_args("chaos"), dir_ + "/first.json",
                                            dir_ + "/first.err");
  auto at = [&](long long n) {
    ASSERT_GE(WaitForEvaluations(store_, "chaos", n), n) << first->Err();
  };
  at(20);
  r[0]->Signal(SIGKILL);  // a run worker, with what it holds (prefetch 2)
  r[0]->Wait(std::chrono::seconds(10));
  r[0].reset();
  at(45);
  r[2]->Signal(SIGKILL);  // the build worker (prefetch 2); another takes its place
  r[2]->Wait(std::chrono::seconds(10));
  r[2] = std::make_unique<Background>(
      fmt::format("worker --role build --fake --build-jobs 1 --store {} --queue {} --heartbeat 1",
                  store_, queue_),
      dir_ + "/build2.out", dir_ + "/build2.err");
  at(70);
  r[3]->Signal(SIGKILL);  // the propose worker, a slow command in hand; another takes its place
  r[3]->Wait(std::chrono::seconds(10));
  r[3] = std::make_unique<Background>(
      fmt::format("worker --role propose --concurrency 2 --store {} --queue {} --heartbeat 1",
                  store_, queue_),
      dir_ + "/propose2.out", dir_ + "/propose2.err");
  at(95);
  first->Signal(SIGKILL);  // the coordinator, jobs out
  EXPECT_EQ(first->Wait(std::chrono::seconds(10)), -1);
  broker_->Stop();  // and the broker, while it is down
  std::this_thread::sleep_for(std::chrono::seconds(2));
  broker_->Start();
  ASSERT_TRUE(WaitForWorkers(store_, "build", 1));
  Background again(fmt::format("coordinator --resume chaos --store {} --queue {} --json "
                               "--wait-workers 120",
                               store_, queue_),
                   dir_ + "/again.json", dir_ + "/again.err");
  ASSERT_EQ(again.Wait(std::chrono::seconds(300)), 0) << again.Err();
  nlohmann::json out = nlohmann::json::parse(again.Out(), nullptr, false);
  ASSERT_TRUE(out.is_object()) << again.Out() << again.Err();
  ExpectTheBudgetStoredOnce(store_, "chaos", out, budget);
  ExpectEveryProposalFinal(store_, "chaos");
  EXPECT_EQ(Evaluations(store_, "chaos"), uninterrupted);
  stop_all(r);
  // Done twice at most: what the killed run worker held (2), what the killed build worker had
  // forwarded without its ack (2), the killed coordinator's jobs out (2 per device, 2 devices),
  // and what the survivor held when the broker went (2). The killed run worker's last heartbeat
  // lags its count (by as many jobs as it did in its last second): that only lowers the figure.
  const long long executions = RunJobsDone(store_) - before;
  EXPECT_LE(executions, static_cast<long long>(Evaluations(store_, "chaos")) + 10);
}

// A coordinator started with no propose worker runs its command proposer itself; a propose
// worker started in the middle of the run gets the commands from then on.
TEST_F(ClusterCli, AProposeWorkerStartedAfterTheCoordinatorGetsItsCommands) {
  Background run(fmt::format("worker --role run --fake --device cuda --store {} --queue {} "
                             "--heartbeat 1",
                             store_, queue_),
                 dir_ + "/run.out", dir_ + "/run.err");
  ASSERT_TRUE(WaitForWorkers(store_, "run", 1)) << run.Err();
  const int budget = 160;
  Background coordinator(
      fmt::format("coordinator softmax_rows --device fake --budget {} --store {} --queue {} --run "
                  "late --top 1 --repeats 1 --in-flight 2 --seed 5 --wait-workers 120 --json "
                  "--proposer command --proposer-cmd \"python3 {}/../examples/proposers/"
                  "param_walk.py --delay 0.5 --templates\"",
                  budget, store_, queue_, KF_TASKS),
      dir_ + "/coordinator.json", dir_ + "/coordinator.err");
  ASSERT_GE(WaitForEvaluations(store_, "late", 10), 10) << coordinator.Err();
  Background propose(fmt::format("worker --role propose --concurrency 2 --store {} --queue {} "
                                 "--heartbeat 1",
                                 store_, queue_),
                     dir_ + "/propose.out", dir_ + "/propose.err");
  ASSERT_EQ(coordinator.Wait(std::chrono::seconds(300)), 0) << coordinator.Err();
  const std::string err = coordinator.Err();
  const size_t here = err.find(
      "propose workers: none alive; the command proposer's commands are "
      "done here");
  const size_t there = err.find(
      "propose workers: 1 alive; the command proposer's commands are "
      "done there");
  EXPECT_NE(here, std::string::npos) << err;
  EXPECT_NE(there, std::string::npos) << err;
  EXPECT_LT(here, there) << err;
  nlohmann::json out = nlohmann::json::parse(coordinator.Out(), nullptr, false);
  ASSERT_TRUE(out.is_object()) << coordinator.Out() << err;
  ExpectTheBudgetStoredOnce(store_, "late", out, budget);
  propose.Signal(SIGTERM);
  EXPECT_EQ(propose.Wait(std::chrono::seconds(60)), 0) << propose.Err();
  long long propose_jobs = 0;
  for (const WorkerRecord& w : OpenStore(store_, true)->Workers())
    if (w.role == "propose") propose_jobs += w.jobs_done;
  EXPECT_GT(propose_jobs, 0) << propose.Err();
  run.Signal(SIGTERM);
  EXPECT_EQ(run.Wait(std::chrono::seconds(60)), 0) << run.Err();
}

TEST_F(ClusterCli, ACoordinatorWithoutWorkersSaysHowToStartOne) {
  testing::KfResult r = RunKfoundry(
      fmt::format("coordinator softmax_rows --device opencl --budget 5 --store {} --queue {} "
                  "--wait-workers 1",
                  store_, queue_));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("kfoundry worker --role run --device opencl --store " + store_.substr(0, 7)),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--queue " + queue_), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kf
