// `kfoundry optimize` on PoCL: a short run beats the baseline, writes a best kernel that
// `kfoundry eval` passes on its own, and a run killed with SIGKILL resumes from its store with
// the same number of distinct evaluations as an uninterrupted run and none repeated.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
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
  std::string dir = fmt::format("{}/optimize.{}.{}", KF_TEST_CACHE, name, getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

constexpr int kBudget = 16;

std::string Args(const std::string& dir, const std::string& extra) {
  return fmt::format(
      "optimize rope_llama3 --device opencl --budget {} --tune-budget 3 --top 1 "
      "--repeats 1 --store sqlite:{}/kf.db --out {}/out --json {}",
      kBudget, dir, dir, extra);
}

void ExpectDistinct(const std::string& db, const std::string& run, size_t n) {
  std::vector<StoredEvaluation> stored = OpenStore(db)->RunEvaluations(run);
  EXPECT_EQ(stored.size(), n);
  std::set<std::string> candidates;
  for (const StoredEvaluation& s : stored) candidates.insert(s.candidate_id);
  EXPECT_EQ(candidates.size(), stored.size()) << "a candidate was judged twice";
}

TEST(OpenCLOptimize, BeatsTheBaselineAndItsBestKernelPassesEvalOnItsOwn) {
  std::string dir = Scratch("short");
  // Compiling ahead is for GPUs; here it is forced on so that its path runs in CI.
  testing::KfResult r = RunKfoundry(Args(dir, "--run short --compile-ahead on"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_FALSE(r.json.is_discarded()) << r.out;
  EXPECT_EQ(r.json["evaluations"], kBudget);
  EXPECT_EQ(r.json["trace"].size(), static_cast<size_t>(kBudget));
  EXPECT_EQ(r.json["totals"]["judged_now"], kBudget);
  EXPECT_GE(r.json["archive"].size(), 3u);
  EXPECT_GT(r.json["totals"]["compiled_ahead"].get<int>(), 0);
  EXPECT_GT(r.json["totals"]["compile_cache_hits"].get<int>(), 0);
  ASSERT_TRUE(r.json["best"].is_object()) << r.out;
  EXPECT_EQ(r.json["best"]["status"], "ok");
  EXPECT_GT(r.json["best"]["speedup"].get<double>(), 1.0);
  EXPECT_EQ(r.json["best"]["descriptor"].size(), 3u);
  std::string file = r.json["best"]["kernel_file"];
  ASSERT_TRUE(fs::exists(file)) << file;
  testing::KfResult again =
      RunKfoundry(fmt::format("eval rope_llama3 {} --device opencl --json", file));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.json["status"], "ok") << again.out;
  EXPECT_EQ(again.json["config"], r.json["best"]["config"]);
  ExpectDistinct(dir + "/kf.db", "short", kBudget);

  // A run of that name exists: it is resumed only when asked to.
  testing::KfResult twice = RunKfoundry(Args(dir, "--run short"));
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.err.find("--resume short"), std::string::npos) << twice.err;
}

TEST(OpenCLOptimize, ARunKilledWithSigkillResumesWithNothingLostAndNothingRepeated) {
  std::string dir = Scratch("killed");
  std::string db = dir + "/kf.db";
  std::string cmd =
      fmt::format("KF_CACHE_DIR={} KF_TASKS_DIR={} exec {} {} >/dev/null 2>{}/err", KF_TEST_CACHE,
                  KF_TASKS, testing::KfBinary(), Args(dir, "--run killed"), dir);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setpgid(0, 0);
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Kill it once some evaluations are stored, in the middle of the run.
  size_t stored = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (!fs::exists(db)) continue;
    try {
      stored = OpenStore(db)->RunEvaluations("killed").size();
    } catch (const std::exception&) {
      continue;  // the schema is being created
    }
    if (stored >= 6) break;
  }
  kill(-pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the run ended before it was killed";
  ASSERT_GE(stored, 6u);
  size_t before = OpenStore(db)->RunEvaluations("killed").size();
  ASSERT_LT(before, static_cast<size_t>(kBudget));

  testing::KfResult resumed =
      RunKfoundry(fmt::format("optimize --store sqlite:{} --resume killed --device opencl "
                              "--top 1 --repeats 1 --out {}/out --json",
                              db, dir));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(resumed.json["evaluations"], kBudget);
  EXPECT_EQ(resumed.json["totals"]["from_store"], before);
  EXPECT_EQ(resumed.json["totals"]["judged_now"], kBudget - static_cast<int>(before));
  ExpectDistinct(db, "killed", kBudget);

  // The same budget uninterrupted: the same number of distinct evaluations.
  std::string whole = Scratch("whole");
  testing::KfResult uninterrupted = RunKfoundry(Args(whole, "--run whole"));
  ASSERT_EQ(uninterrupted.exit_code, 0) << uninterrupted.err;
  EXPECT_EQ(uninterrupted.json["evaluations"], resumed.json["evaluations"]);
  ExpectDistinct(whole + "/kf.db", "whole", kBudget);
}

}  // namespace
}  // namespace kf
