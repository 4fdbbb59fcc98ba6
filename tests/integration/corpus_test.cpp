// The bad-kernel corpus through the judge (builders where the backend compiles offline, the
// supervised executor): every kernel must get its verdict and reason
// (tests/data/corpus/corpus.toml), and a search-sized stream of bad kernels mixed with good ones
// must end with every good kernel `ok` and no worker process left behind; candidates sent ahead
// to an executor come back in order, and survive a crash of the one before them.

#include "host/corpus.hpp"

#include <dirent.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "core/task.hpp"
#include "host/judge.hpp"
#include "host/supervisor.hpp"
#include "kf_process.hpp"
#include "search/classifier.hpp"

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

ExecutorOptions FastOptions(const std::string& device, const std::string& task = "rope_llama3") {
  ExecutorOptions o;
  o.binary = kf::testing::KfBinary();
  o.task = std::string(KF_TASKS) + "/" + task;
  o.device = device;
  o.sizes = "ragged";  // time on a small set: these tests are about verdicts, not speed
  o.settings.warmup_runs = 1;
  o.settings.min_runs = 3;
  o.settings.max_runs = 3;
  o.settings.min_timed_ms = 0;
  o.launch_floor_s = 2;
  return o;
}

class Corpus : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    setenv("KF_CACHE_DIR", KF_TEST_CACHE, 1);
    try {
      JudgeOptions options;
      options.executor = FastOptions(GetParam());
      options.devices = {GetParam()};
      options.build_jobs = 2;
      judge_ = std::make_unique<DeviceJudge>(task_, options);
    } catch (const WorkerError& e) {
      if (e.exit_code() == 3) GTEST_SKIP() << "no " << GetParam() << " device here: " << e.what();
      throw;
    }
    lang_ = std::string(GetParam()) == "cuda" ? Language::kCuda : Language::kOpenCL;
    for (CorpusEntry& e : LoadCorpus(std::string(KF_TEST_DATA) + "/corpus/corpus.toml", lang_))
      (e.task == task_.name ? entries_ : other_entries_).push_back(std::move(e));
  }

  // A judge of `task` on this backend, its executors started with the environment as it is now.
  std::unique_ptr<DeviceJudge> JudgeOf(const std::string& task) {
    JudgeOptions options;
    options.executor = FastOptions(GetParam(), task);
    options.devices = {GetParam()};
    options.build_jobs = 2;
    // The judge keeps a reference to its task: the fixture owns it.
    tasks_.push_back(std::make_unique<Task>(LoadTask(std::string(KF_TASKS) + "/" + task)));
    return std::make_unique<DeviceJudge>(*tasks_.back(), options);
  }

  Task task_ = LoadTask(std::string(KF_TASKS) + "/rope_llama3");
  std::unique_ptr<DeviceJudge> judge_;
  Language lang_ = Language::kOpenCL;
  std::vector<CorpusEntry> entries_;          // rope_llama3's
  std::vector<CorpusEntry> other_entries_;    // other tasks' (the field's exploits)
  std::vector<std::unique_ptr<Task>> tasks_;  // of the judges JudgeOf made
};

// An environment variable set for one test: the executors the test starts inherit it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

TEST_P(Corpus, EveryKernelGetsItsVerdictAndReason) {
  ASSERT_GE(entries_.size(), 15u);
  std::vector<StreamItem> items;
  for (const CorpusEntry& e : entries_) {
    Kernel k = LoadKernelFile(e.path);
    items.push_back({k, k.ResolveConfig({}), &e});
  }
  StreamResult r = RunStream(*judge_, items);
  for (const auto& f : r.failures) ADD_FAILURE() << f;
  EXPECT_EQ(r.evaluated, static_cast<int>(entries_.size()));
  EXPECT_GE(judge_->counters().restarts, 3);  // the loop and the crashes each cost an executor
}

// The field's exploits, each on its own task: copying the reference's output from where it lay,
// computing below the task's precision (fp16 operands; TF32 tensor cores on CUDA).
TEST_P(Corpus, TheFieldsExploitsGetTheirVerdicts) {
  std::map<std::string, std::vector<StreamItem>> by_task;
  for (const CorpusEntry& e : other_entries_) {
    Kernel k = LoadKernelFile(e.path);
    by_task[e.task].push_back({k, k.ResolveConfig({}), &e});
  }
  ASSERT_TRUE(by_task.count("gemm_f32"));
  EXPECT_GE(by_task["gemm_f32"].size(), lang_ == Language::kCuda ? 3u : 2u);
  for (const auto& [task, items] : by_task) {
    std::unique_ptr<DeviceJudge> judge = JudgeOf(task);
    StreamResult r = RunStream(*judge, items);
    for (const auto& f : r.failures) ADD_FAILURE() << task << ": " << f;
    // The task's own templates keep their precision: the probe passes them.
    Task t = LoadTask(std::string(KF_TASKS) + "/" + task);
    for (const std::string& f : t.templates[lang_]) {
      Kernel k = LoadKernelFile(t.PathOf(f));
      JudgeResult good = judge->Evaluate({k, k.ResolveConfig({})});
      EXPECT_EQ(good.evaluation.status, Status::kOk) << f << ": " << good.evaluation.reason;
    }
  }
}

// A harness that leaks the reference's output into the candidate's buffers (a test-only switch)
// is caught by the ghost replay: the run stops with an error, whatever the candidate.
TEST_P(Corpus, TheGhostReplayStopsALeakingHarness) {
  ScopedEnv leak("KF_TEST_LEAK_REFERENCE", "1");
  std::unique_ptr<DeviceJudge> judge = JudgeOf(task_.name);
  Kernel nothing = LoadKernelFile(std::string(KF_TEST_DATA) + "/corpus/writes_nothing" +
                                  (lang_ == Language::kCuda ? ".cu" : ".cl"));
  JudgeResult r = judge->Evaluate({nothing, nothing.ResolveConfig({})});
  EXPECT_NE(r.tool_error.find("ghost replay"), std::string::npos)
      << "tool error: '" << r.tool_error << "', verdict " << StatusName(r.evaluation.status) << ": "
      << r.evaluation.reason;
}

// A correct kernel timed under its task's FLOP floor is implausible: the device's peak rate is
// set low ($KF_PEAK_GFLOPS) so that gemm_f32's own baseline runs under it.
TEST_P(Corpus, AKernelUnderItsTasksFlopFloorIsImplausible) {
  ScopedEnv peak("KF_PEAK_GFLOPS", "0.001");
  std::unique_ptr<DeviceJudge> judge = JudgeOf("gemm_f32");
  Task gemm = LoadTask(std::string(KF_TASKS) + "/gemm_f32");
  Kernel k = LoadKernelFile(gemm.PathOf(lang_ == Language::kCuda ? "baseline.cu" : "baseline.cl"));
  JudgeResult r = judge->Evaluate({k, k.ResolveConfig({})});
  EXPECT_EQ(r.evaluation.status, Status::kImplausible) << r.evaluation.reason << r.tool_error;
  EXPECT_NE(r.evaluation.reason.find("FLOP floor"), std::string::npos) << r.evaluation.reason;
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
  StreamResult r = RunStream(*judge_, items);
  for (const auto& f : r.failures) ADD_FAILURE() << f;
  ExecutorCounters c = judge_->counters();
  fmt::print(
      "stream: {} evaluations in {:.1f} s; verdicts {}; executor starts {}, restarts {}, "
      "{:.1f} s lost to faults\n",
      r.evaluated, r.wall_s, nlohmann::json(r.count_by_status).dump(), c.starts, c.restarts,
      c.fault_seconds);
  EXPECT_GE(r.evaluated, 200);
  EXPECT_EQ(r.count_by_status["ok"], static_cast<int>(items.size() - items.size() / 3));
  judge_.reset();
  EXPECT_TRUE(ChildProcesses().empty()) << "worker processes left behind";
}

// Candidates sent ahead: replies come back in the order sent, each its own; a crash of the one
// running costs the executor, and what was sent ahead to it is sent again to the next one.
TEST_P(Corpus, CandidatesSentAheadSurviveACrashOfTheOneBeforeThem) {
  std::string ext = lang_ == Language::kCuda ? ".cu" : ".cl";
  Kernel crash = LoadKernelFile(std::string(KF_TEST_DATA) + "/corpus/null_write" + ext);
  Kernel good = LoadKernelFile(task_.PathOf("rope_vec8" + ext));
  Kernel slow = LoadKernelFile(task_.PathOf("baseline" + ext));
  Supervisor supervisor(FastOptions(GetParam()));
  auto request = [](const Kernel& k, const Config& c) { return RunRequest{{k, c}, std::nullopt}; };
  int first = supervisor.Submit(request(crash, crash.ResolveConfig({})));
  std::optional<int> second =
      supervisor.SubmitAhead(request(good, good.ResolveConfig({{"HPT", "2"}})));
  std::optional<int> third = supervisor.SubmitAhead(request(slow, slow.ResolveConfig({})));
  ASSERT_TRUE(second && third) << "a small request fits an empty channel";
  EXPECT_THROW(supervisor.Await(*second), std::logic_error);  // not before the first
  RunReply a = supervisor.Await(first);
  EXPECT_EQ(a.evaluation.status, Status::kCrash) << a.evaluation.reason;
  RunReply b = supervisor.Await(*second);
  EXPECT_EQ(b.evaluation.status, Status::kOk) << b.evaluation.reason;
  EXPECT_EQ(b.evaluation.config.at("HPT"), "2");
  RunReply c = supervisor.Await(*third);
  EXPECT_EQ(c.evaluation.status, Status::kOk) << c.evaluation.reason;
  EXPECT_TRUE(c.evaluation.config.empty() || !c.evaluation.config.count("HPT"));
  EXPECT_EQ(supervisor.counters().restarts, 1);
  // Sent ahead after the restart, and the queue empty again: a plain Run still works.
  EXPECT_EQ(supervisor.Evaluate(good, good.ResolveConfig({})).status, Status::kOk);
}

TEST_P(Corpus, ADestroyedJudgeTakesItsWorkersWithIt) {
  Kernel k = LoadKernelFile(task_.PathOf(lang_ == Language::kCuda ? "baseline.cu" : "baseline.cl"));
  ASSERT_EQ(judge_->Evaluate({k, k.ResolveConfig({})}).evaluation.status, Status::kOk);
  std::vector<int> workers = ChildProcesses();
  ASSERT_FALSE(workers.empty());
  judge_.reset();  // closes every channel: the executor and the builders exit
  usleep(200000);
  for (int pid : workers) EXPECT_NE(kill(pid, 0), 0) << "worker " << pid << " outlived its judge";
}

TEST_P(Corpus, EveryBundledTemplateIsCorrectAndTheyFillDifferentCells) {
  const auto& files = task_.templates[lang_];
  ASSERT_GE(files.size(), 5u);
  DescriptorSpace descriptors = DescriptorSpace::Load(DefaultDescriptorFile());
  std::set<std::vector<int>> cells;
  for (const std::string& f : files) {
    Kernel k = LoadKernelFile(task_.PathOf(f));
    JudgeResult r = judge_->Evaluate({k, k.ResolveConfig({})});
    EXPECT_EQ(r.evaluation.status, Status::kOk) << f << ": " << r.evaluation.reason;
    if (lang_ == Language::kCuda) {
      EXPECT_FALSE(r.listing.empty()) << "no PTX came back for " << f;
    }
    std::vector<int> cell = descriptors.Classify(lang_, k.source, r.listing);
    ASSERT_EQ(cell.size(), 3u) << f;
    cells.insert(cell);
    fmt::print("template {}: cell [{}, {}, {}]\n", f, cell[0], cell[1], cell[2]);
  }
  EXPECT_GE(cells.size(), 4u);
}

INSTANTIATE_TEST_SUITE_P(OpenCL, Corpus, ::testing::Values("opencl"));
INSTANTIATE_TEST_SUITE_P(Cuda, Corpus, ::testing::Values("cuda"));

}  // namespace
}  // namespace kf
