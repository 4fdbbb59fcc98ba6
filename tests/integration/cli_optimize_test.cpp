// `kfoundry optimize` on PoCL: a short run beats the baseline and writes a best kernel that
// `kfoundry eval` passes on its own; a run killed with SIGKILL while several proposals are in
// flight resumes from its store with every proposal and candidate judged once and the same number
// of distinct evaluations as an uninterrupted run; the `command` proposer drives a search, and
// its bad replies are counted, not fatal; two PoCL devices both judge candidates; the embedded
// mode opens no socket (strace sees every process of the run).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <thread>

#include "kf_process.hpp"
#include "store/store.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;
using testing::RunKfoundry;

std::string Scratch(const std::string& name) {
  return testing::Scratch("optimize", name);
}

constexpr int kBudget = 16;

std::string Args(const std::string& dir, const std::string& extra, int budget = kBudget) {
  return fmt::format(
      "optimize rope_llama3 --device opencl --budget {} --tune-budget 3 --top 1 "
      "--repeats 1 --store sqlite:{}/kf.db --out {}/out --json {}",
      budget, dir, dir, extra);
}

// The example proposer of examples/proposers, answering after `delay` seconds.
std::string ParamWalk(double delay, const std::string& more = "") {
  return fmt::format(
      "--proposer command --proposer-cmd \"python3 {}/../examples/proposers/"
      "param_walk.py --delay {}{}\"",
      KF_TASKS, delay, more);
}

void ExpectDistinct(const std::string& db, const std::string& run, size_t n) {
  std::vector<StoredEvaluation> stored = OpenStore(db)->RunEvaluations(run);
  size_t search = 0;
  std::set<std::string> candidates;
  for (const StoredEvaluation& s : stored) {
    if (s.purpose != "search") continue;
    ++search;
    candidates.insert(s.candidate_id);
  }
  EXPECT_EQ(search, n);
  EXPECT_EQ(candidates.size(), search) << "a candidate was judged twice";
}

TEST(OpenCLOptimize, BeatsTheBaselineAndItsBestKernelPassesEvalOnItsOwn) {
  std::string dir = Scratch("short");
  testing::KfResult r = RunKfoundry(Args(dir, "--run short --in-flight 2"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_FALSE(r.json.is_discarded()) << r.out;
  EXPECT_EQ(r.json["evaluations"], kBudget);
  EXPECT_EQ(r.json["trace"].size(), static_cast<size_t>(kBudget));
  EXPECT_EQ(r.json["totals"]["judged_now"], kBudget);
  EXPECT_GE(r.json["archive"].size(), 3u);
  ASSERT_TRUE(r.json["best"].is_object()) << r.out;
  EXPECT_EQ(r.json["best"]["status"], "ok");
  EXPECT_GT(r.json["best"]["speedup"].get<double>(), 1.0);
  EXPECT_EQ(r.json["best"]["descriptor"].size(), 3u);
  EXPECT_NE(r.json["best"]["verified_on"].get<std::string>().find("opencl:0"), std::string::npos);
  std::string file = r.json["best"]["kernel_file"];
  ASSERT_TRUE(fs::exists(file)) << file;
  testing::KfResult again =
      RunKfoundry(fmt::format("eval rope_llama3 {} --device opencl --json", file));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.json["status"], "ok") << again.out;
  EXPECT_EQ(again.json["config"], r.json["best"]["config"]);
  ExpectDistinct(dir + "/kf.db", "short", kBudget);
  // The final re-verification is in the store as evaluations of its own.
  int finals = 0;
  for (const StoredEvaluation& s : OpenStore(dir + "/kf.db")->RunEvaluations("short"))
    finals += s.purpose == "final";
  EXPECT_EQ(finals, 1);

  // A run of that name exists: it is resumed only when asked to.
  testing::KfResult twice = RunKfoundry(Args(dir, "--run short"));
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.err.find("--resume short"), std::string::npos) << twice.err;
  // A name the report's file and the dashboard's URL could not carry is refused up front.
  for (std::string bad : {"a/b", "..", "-x", "run one"}) {
    testing::KfResult refused = RunKfoundry(Args(dir, "--run='" + bad + "'"));
    EXPECT_EQ(refused.exit_code, 2) << bad;
    EXPECT_NE(refused.err.find("--run"), std::string::npos) << refused.err;
    EXPECT_FALSE(OpenStore(dir + "/kf.db")->FindRun(bad)) << bad;
  }
  // Resumed when finished, it judges nothing: not the search, not the re-verification.
  testing::KfResult finished = RunKfoundry(fmt::format(
      "optimize --store sqlite:{}/kf.db --resume short --device opencl --top 1 --repeats 1 "
      "--out {}/out --json",
      dir, dir));
  ASSERT_EQ(finished.exit_code, 0) << finished.err;
  EXPECT_EQ(finished.json["totals"]["judged_now"], 0);
  EXPECT_EQ(finished.json["totals"]["reverified_now"], 0);
  EXPECT_EQ(finished.json["best"]["kernel_id"], r.json["best"]["kernel_id"]);
}

TEST(OpenCLOptimize, ARunKilledWithEightProposalsInFlightResumesWithEachJudgedOnce) {
  constexpr int kKillBudget = 40;
  std::string dir = Scratch("killed");
  std::string db = dir + "/kf.db";
  // Walking from templates and inspirations too, so neither run runs out of new kernels first.
  std::string extra = "--run killed --in-flight 8 " + ParamWalk(0.3, " --templates");
  std::string cmd =
      fmt::format("KF_CACHE_DIR={} KF_TASKS_DIR={} exec {} {} >/dev/null 2>{}/err", KF_TEST_CACHE,
                  KF_TASKS, testing::KfBinary(), Args(dir, extra, kKillBudget), dir);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setpgid(0, 0);
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Kill it once some evaluations are stored and several proposals are out.
  size_t stored = 0, out = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (!fs::exists(db)) continue;
    try {
      auto store = OpenStore(db);
      stored = store->RunEvaluations("killed").size();
      out = 0;
      for (const ProposalRecord& p : store->RunProposals("killed")) out += !p.Final();
    } catch (const std::exception&) {
      continue;  // the schema is being created
    }
    if (stored >= 10 && out >= 4) break;
  }
  kill(-pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the run ended before it was killed";
  ASSERT_GE(stored, 10u);
  ASSERT_GE(out, 4u) << "too few proposals in flight when killed";
  size_t before = OpenStore(db)->RunEvaluations("killed").size();
  ASSERT_LT(before, static_cast<size_t>(kKillBudget));

  testing::KfResult resumed =
      RunKfoundry(fmt::format("optimize --store sqlite:{} --resume killed --device opencl "
                              "--top 1 --repeats 1 --out {}/out --json",
                              db, dir));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(resumed.json["evaluations"], kKillBudget);
  EXPECT_EQ(resumed.json["totals"]["judged_now"], kKillBudget - static_cast<int>(before));
  ExpectDistinct(db, "killed", kKillBudget);
  // Every proposal once: each kernel belongs to one proposal, and none is left in flight.
  std::set<std::string> kernels;
  for (const ProposalRecord& p : OpenStore(db)->RunProposals("killed")) {
    EXPECT_TRUE(p.Final()) << "proposal " << p.index << " left " << ProposalStateName(p.state);
    if (p.proposal) {
      EXPECT_TRUE(kernels.insert(KernelId(p.proposal->kernel)).second)
          << "proposal " << p.index << " repeats another's kernel";
    }
  }

  // The same budget uninterrupted: the same number of distinct evaluations.
  std::string whole = Scratch("whole");
  testing::KfResult uninterrupted = RunKfoundry(
      Args(whole, "--run whole --in-flight 8 " + ParamWalk(0.3, " --templates"), kKillBudget));
  ASSERT_EQ(uninterrupted.exit_code, 0) << uninterrupted.err;
  EXPECT_EQ(uninterrupted.json["evaluations"], resumed.json["evaluations"])
      << uninterrupted.json["stop_reason"] << " / " << resumed.json["stop_reason"];
  ExpectDistinct(whole + "/kf.db", "whole", kKillBudget);
}

TEST(OpenCLOptimize, TheCommandProposerDrivesTheSearchAndItsBadRepliesAreCounted) {
  std::string dir = Scratch("command");
  testing::KfResult r = RunKfoundry(Args(dir, "--run cmd --in-flight 3 " + ParamWalk(0)));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json["evaluations"], kBudget);
  int from_command = 0;
  for (const auto& p : r.json["proposals"]) {
    if (p.value("origin", "").rfind("command ", 0) == 0) ++from_command;
  }
  EXPECT_GE(from_command, 2) << r.json["proposals"].dump(2);
  ASSERT_TRUE(r.json["best"].is_object()) << r.err;

  // A proposer that only ever answers badly: each reply is a counted verdict; the run ends.
  std::string broken = Scratch("broken");
  testing::KfResult b =
      RunKfoundry(Args(broken,
                       "--run broken --in-flight 2 --proposer command --proposer-cmd "
                       "\"echo 'no kernel here'\""));
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_GE(b.json["totals"]["proposal_states"]["bad_reply"].get<int>(), 25);
  // The baseline's three configurations were all judged with it: nothing is left to tune.
  EXPECT_EQ(b.json["stop_reason"],
            "nothing left to try: the proposer had nothing new for any parent, and every "
            "correct kernel's space is tuned through");
  EXPECT_EQ(b.json["totals"]["budget"]["deeper_tuning"].get<int>(), 0) << b.out;
  EXPECT_NE(b.err.find("bad reply"), std::string::npos);
}

TEST(OpenCLOptimize, TwoDevicesBothJudgeCandidates) {
  std::string dir = Scratch("two");
  testing::KfResult r = RunKfoundry(
      fmt::format("optimize rope_llama3 --device opencl:0,opencl:1 --budget 20 --tune-budget 4 "
                  "--in-flight 4 --top 1 --repeats 1 --store sqlite:{0}/kf.db --out {0}/out "
                  "--run two --json",
                  dir),
      "POCL_DEVICES='pthread pthread'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.json["devices"].size(), 2u) << r.out;
  for (const auto& d : r.json["devices"])
    EXPECT_GT(d["evaluations"].get<int>(), 0) << d["device"] << " judged nothing";
  const auto& by_device = r.json["totals"]["evaluations_by_device"];
  EXPECT_EQ(by_device.size(), 2u) << by_device.dump();
  // Each verdict names its device, and the archive says where each elite was timed.
  for (const auto& e : r.json["archive"])
    EXPECT_NE(e["device"].get<std::string>().find("opencl:"), std::string::npos);
  // The same device twice would time two candidates on it at once.
  testing::KfResult twice =
      RunKfoundry(fmt::format("optimize rope_llama3 --device opencl:0,opencl:0 --budget 2 --store "
                              "sqlite:{0}/kf2.db --json",
                              dir));
  EXPECT_EQ(twice.exit_code, 2) << twice.err;
  EXPECT_NE(twice.err.find("named twice"), std::string::npos) << twice.err;
}

// `optimize` with no services is one process tree with files and pipes: no socket of any family is
// created, bound or connected by it, its executors or its builders (issue 30: the distributed
// roles add a transport beside the embedded mode, not under it).
TEST(OpenCLOptimize, OpensNoSocket) {
  ASSERT_EQ(std::system("strace -V >/dev/null 2>&1"), 0)
      << "strace is missing: scripts/setup.sh --tests installs it";
  std::string dir = Scratch("nosocket");
  std::string trace = dir + "/strace.txt";
  // RunKfoundry puts its `env` argument before the binary: here the tracer, with the run's
  // environment passed through it. %network is every socket call (socket, socketpair, connect,
  // bind, listen, accept, send*, recv*, ...); -qq leaves only calls and signals in the trace.
  testing::KfResult r = RunKfoundry(
      fmt::format("optimize rope_llama3 --device opencl:0,opencl:1 --budget 8 --tune-budget 3 "
                  "--in-flight 2 --top 1 --repeats 1 --store sqlite:{0}/kf.db --out {0}/out --json",
                  dir),
      fmt::format("POCL_DEVICES='pthread pthread' strace -f -qq -e trace=%network -o {}", trace));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json["evaluations"], 8) << r.out;
  ASSERT_TRUE(fs::exists(trace));
  std::string calls;
  std::istringstream lines(testing::ReadText(trace));
  for (std::string line; std::getline(lines, line);) {
    // Signal deliveries (" --- SIGCHLD ...") and exits (" +++ exited ...") are not calls.
    if (line.find(" --- ") != std::string::npos || line.find(" +++ ") != std::string::npos)
      continue;
    calls += line + "\n";
  }
  EXPECT_EQ(calls, "") << "optimize made socket calls";
}

}  // namespace
}  // namespace kf
