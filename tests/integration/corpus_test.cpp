// The bad-kernel corpus through the supervised executor: every kernel must get its verdict and
// reason (tests/data/corpus/corpus.toml), and a search-sized stream of bad kernels mixed with
// good ones must end with every good kernel `ok` and no executor process left behind.

#include "eval/corpus.hpp"

#include <dirent.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "core/task.hpp"
#include "eval/executor.hpp"
#include "kf_process.hpp"

namespace kf {
namespace {

// Processes whose parent is this test process.
std::vector<int> ChildProcesses() {
  std::vector<int> children;
  DIR* proc = opendir("/proc");
  while (dirent* e = readdir(proc)) {
    int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream stat(fmt::format("/proc/{}/stat", pid));
    std::string line;
    std::getline(stat, line);
    size_t paren = line.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream rest(line.substr(paren + 2));
    char state;
    int ppid;
    rest >> state >> ppid;
    if (ppid == getpid()) children.push_back(pid);
  }
  closedir(proc);
  return children;
}

ExecutorOptions FastOptions(const std::string& device) {
  ExecutorOptions o;
  o.binary = kf::testing::KfBinary();
  o.task = std::string(KF_TASKS) + "/rope_llama3";
  o.device = device;
  o.sizes = "ragged";  // time on a small set: these tests are about verdicts, not speed
  o.warmup_runs = 1;
  o.min_runs = 3;
  o.max_runs = 3;
  o.min_timed_ms = 0;
  o.launch_floor_s = 2;
  return o;
}

class Corpus : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    setenv("KF_CACHE_DIR", KF_TEST_CACHE, 1);
    try {
      supervisor_ = std::make_unique<Supervisor>(FastOptions(GetParam()));
    } catch (const ExecutorError& e) {
      if (e.exit_code() == 3) GTEST_SKIP() << "no " << GetParam() << " device here: " << e.what();
      throw;
    }
    lang_ = std::string(GetParam()) == "cuda" ? Language::kCuda : Language::kOpenCL;
    entries_ = LoadCorpus(std::string(KF_TEST_DATA) + "/corpus/corpus.toml", lang_);
  }

  std::unique_ptr<Supervisor> supervisor_;
  Language lang_ = Language::kOpenCL;
  std::vector<CorpusEntry> entries_;
};

TEST_P(Corpus, EveryKernelGetsItsVerdictAndReason) {
  ASSERT_GE(entries_.size(), 15u);
  std::vector<StreamItem> items;
  for (const CorpusEntry& e : entries_) {
    Kernel k = LoadKernelFile(e.path);
    items.push_back({k, k.ResolveConfig({}), &e});
  }
  StreamResult r = RunStream(*supervisor_, items);
  for (const auto& f : r.failures) ADD_FAILURE() << f;
  EXPECT_EQ(r.evaluated, static_cast<int>(entries_.size()));
  EXPECT_GE(supervisor_->counters().restarts, 3);  // the loop and the crashes each cost an executor
}

TEST_P(Corpus, StreamOfHundredsKeepsEveryGoodKernelOkAndLeavesNoExecutor) {
  Task task = LoadTask(std::string(KF_TASKS) + "/rope_llama3");
  std::string ext = lang_ == Language::kCuda ? ".cu" : ".cl";
  Kernel baseline = LoadKernelFile(task.PathOf("baseline" + ext));
  Kernel vec8 = LoadKernelFile(task.PathOf("rope_vec8" + ext));
  std::vector<StreamItem> good;
  for (const char* block : {"128", "256"})
    good.push_back({baseline, baseline.ResolveConfig({{"BLOCK", block}}), nullptr});
  for (const char* hpt : {"1", "2", "4", "8"})
    good.push_back({vec8, vec8.ResolveConfig({{"HPT", hpt}}), nullptr});
  std::vector<StreamItem> items;
  size_t g = 0;
  for (int round = 0; items.size() < 200; ++round) {
    for (const CorpusEntry& e : entries_) {
      Kernel k = LoadKernelFile(e.path);
      items.push_back({k, k.ResolveConfig({}), &e});
      for (int j = 0; j < 2; ++j) items.push_back(good[g++ % good.size()]);
    }
  }
  StreamResult r = RunStream(*supervisor_, items);
  for (const auto& f : r.failures) ADD_FAILURE() << f;
  ExecutorCounters c = supervisor_->counters();
  fmt::print(
      "stream: {} evaluations in {:.1f} s; verdicts {}; executor starts {}, restarts {}, "
      "{:.1f} s lost to faults\n",
      r.evaluated, r.wall_s, nlohmann::json(r.count_by_status).dump(), c.starts, c.restarts,
      c.fault_seconds);
  EXPECT_GE(r.evaluated, 200);
  EXPECT_EQ(r.count_by_status["ok"], static_cast<int>(items.size() - items.size() / 3));
  supervisor_.reset();
  EXPECT_TRUE(ChildProcesses().empty()) << "executor processes left behind";
}

TEST_P(Corpus, AKilledSupervisorTakesItsExecutorWithIt) {
  pid_t executor = supervisor_->executor_pid();
  ASSERT_GT(executor, 0);
  EXPECT_EQ(kill(executor, 0), 0);
  supervisor_.reset();  // closes the channel: the executor exits
  usleep(200000);
  EXPECT_NE(kill(executor, 0), 0) << "executor " << executor << " outlived its supervisor";
}

TEST_P(Corpus, EveryBundledTemplateIsCorrectAndTheyFillDifferentCells) {
  Task task = LoadTask(std::string(KF_TASKS) + "/rope_llama3");
  const auto& files = task.templates[lang_];
  ASSERT_GE(files.size(), 5u);
  std::set<std::vector<int>> cells;
  for (const std::string& f : files) {
    Kernel k = LoadKernelFile(task.PathOf(f));
    Evaluation ev = supervisor_->Evaluate(k, k.ResolveConfig({}));
    EXPECT_EQ(ev.status, Status::kOk) << f << ": " << ev.reason;
    ASSERT_EQ(ev.descriptor.size(), 3u) << f;
    cells.insert(ev.descriptor);
    fmt::print("template {}: cell [{}, {}, {}]\n", f, ev.descriptor[0], ev.descriptor[1],
               ev.descriptor[2]);
  }
  EXPECT_GE(cells.size(), 4u);
}

INSTANTIATE_TEST_SUITE_P(OpenCL, Corpus, ::testing::Values("opencl"));
INSTANTIATE_TEST_SUITE_P(Cuda, Corpus, ::testing::Values("cuda"));

}  // namespace
}  // namespace kf
