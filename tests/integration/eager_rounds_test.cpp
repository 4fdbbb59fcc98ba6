// A task whose reference is a PyTorch module and that has no baseline kernel: PyTorch eager is
// the time to beat (issue 31). Careful timing (eval, the final re-verification) alternates the
// candidate's timed runs with PyTorch's in rounds on the same inputs; a search's fast timing
// times PyTorch once, before the candidate, and reuses it. The reference source here is a
// stand-in (ReLU computed on the host, made-up eager runs), so the order of the calls is seen
// without Python: the evaluator's phases as its observer hears them. On PoCL; skipped, saying
// so, without it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "backend/registry.hpp"
#include "core/kernel.hpp"
#include "core/task.hpp"
#include "eval/evaluator.hpp"
#include "kf_process.hpp"

namespace kf {
namespace {

constexpr const char* kTask = R"(name = "relu_eager"
op_class = "elementwise"
description = "ReLU, PyTorch eager the baseline"
sizes = ["batch_size", "dim"]

[[args]]
name = "x"
type = "f32"
shape = ["batch_size", "dim"]
role = "in"
init = { dist = "normal", mean = 0, std = 1 }

[[args]]
name = "out"
type = "f32"
shape = ["batch_size", "dim"]
role = "out"

[[args]]
name = "batch_size"
type = "i32"
value = "batch_size"

[[args]]
name = "dim"
type = "i32"
value = "dim"

[[check]]
name = "ragged"
batch_size = 3
dim = 37

[[bench]]
name = "cpu"
device_class = "cpu"
batch_size = 64
dim = 1024

[tolerance]
atol = 1e-6
rtol = 1e-6

[cost]
min_bytes = "8 * batch_size * dim"

[kernels]
reference = { torch = "model.py" }
)";

constexpr double kEagerMs = 5.0;  // every made-up eager run

// ReLU on the host; eager's runs made up (min_runs of them, each kEagerMs), torch.compile absent.
class HostRelu : public ReferenceSource {
 public:
  explicit HostRelu(int* timings) : timings_(timings) {}
  std::vector<HostBuffer> Outputs(const SizeSet&, const std::vector<HostBuffer>& args) override {
    std::vector<HostBuffer> out = args;
    const HostBuffer& x = args.at(0);
    HostBuffer& y = out.at(1);
    y.dtype = DType::kF32;
    y.count = x.count;
    y.bytes.resize(x.bytes.size());
    for (size_t i = 0; i < x.count; ++i) {
      float v;
      std::memcpy(&v, x.bytes.data() + 4 * i, 4);
      v = std::fmax(v, 0.0f);
      std::memcpy(y.bytes.data() + 4 * i, &v, 4);
    }
    return out;
  }
  std::vector<BaselineRuns> TimeBaselines(const SizeSet&, const std::vector<HostBuffer>& args,
                                          const EvalSettings& s, int64_t, bool) override {
    EXPECT_FALSE(args.at(0).bytes.empty()) << "PyTorch must get the candidate's inputs";
    ++*timings_;
    return {{"torch eager", "a stand-in", std::vector<double>(s.min_runs, kEagerMs), ""},
            {"torch.compile", "a stand-in", {}, "not in this stand-in"}};
  }

 private:
  int* timings_;
};

// The timing step's phases, one letter each (runs of one letter collapsed): C a candidate launch,
// B PyTorch's baselines timed.
class TimingPhases : public EvalObserver {
 public:
  void Phase(EvalPhase phase, int, const EvalPlace& place, double) override {
    if (place.step != "time") return;
    char c = phase == EvalPhase::kLaunch && place.launch == "candidate" ? 'C'
             : phase == EvalPhase::kHost && place.launch == "baseline"  ? 'B'
                                                                        : 0;
    if (c && (seen.empty() || seen.back() != c)) seen += c;
  }
  std::string seen;
};

class OpenCLEagerBaseline : public ::testing::Test {
 protected:
  void SetUp() override {
    backends_ = MakeBackends();
    std::string error;
    device_ = OpenDevice(backends_, "opencl", &error);
    if (!device_) GTEST_SKIP() << "no OpenCL device here: " << error;
    dir_ = testing::Scratch("eager_rounds", "task");
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ + "/task.toml") << kTask;
    std::ofstream(dir_ + "/model.py") << "# not read: the test's reference source stands in\n";
    task_ = std::make_unique<Task>(LoadTask(dir_));
    cache_ = std::make_unique<CompileCache>(KF_TEST_CACHE);
  }
  Evaluation Evaluate(const EvalSettings& settings) {
    EvalOptions o;
    o.settings = settings;
    o.observer = &phases_;
    o.reference_source = [this](const Task&, const DeviceInfo&) {
      return std::make_unique<HostRelu>(&timings_);
    };
    Evaluator evaluator(*device_, *task_, *cache_, o);
    Kernel k = LoadKernelFile(std::string(KF_TEST_DATA) + "/torch_reference/relu.cl");
    return evaluator.Evaluate(k, Config{});
  }
  std::vector<std::unique_ptr<Backend>> backends_;
  std::unique_ptr<Device> device_;
  std::string dir_;
  std::unique_ptr<Task> task_;
  std::unique_ptr<CompileCache> cache_;
  TimingPhases phases_;
  int timings_ = 0;
};

TEST_F(OpenCLEagerBaseline, CarefulTimingAlternatesPyTorchsRoundsWithTheCandidates) {
  Evaluation ev = Evaluate(EvalSettings::Thorough());
  ASSERT_EQ(ev.status, Status::kOk) << ev.reason;
  EXPECT_EQ(phases_.seen, "CBCBCBCB");
  EXPECT_EQ(timings_, 4);
  ASSERT_EQ(ev.external_baselines.size(), 2u);
  const ExternalBaseline& eager = ev.external_baselines[0];
  EXPECT_EQ(eager.name, "torch eager");
  ASSERT_TRUE(eager.time);
  // Every round's runs pooled: four rounds of a quarter of the runs each (10 / 4, rounded up).
  EXPECT_EQ(eager.time->runs, 12);
  EXPECT_FALSE(ev.external_baselines[1].time);
  EXPECT_EQ(ev.external_baselines[1].unavailable, "not in this stand-in");
  // No baseline kernel: eager is the baseline, and the speedup is against it.
  ASSERT_TRUE(ev.baseline_time && ev.time && ev.speedup);
  EXPECT_DOUBLE_EQ(ev.baseline_time->median_ms, kEagerMs);
  EXPECT_DOUBLE_EQ(*ev.speedup, kEagerMs / ev.time->median_ms);
  EXPECT_GE(ev.time->runs, 10);
}

TEST_F(OpenCLEagerBaseline, FastTimingTimesPyTorchOnceBeforeTheCandidate) {
  Evaluation ev = Evaluate(EvalSettings::Fast());
  ASSERT_EQ(ev.status, Status::kOk) << ev.reason;
  EXPECT_EQ(phases_.seen, "BC");
  EXPECT_EQ(timings_, 1);
  ASSERT_FALSE(ev.external_baselines.empty());
  ASSERT_TRUE(ev.external_baselines[0].time);
  EXPECT_EQ(ev.external_baselines[0].time->runs, 10);  // the reused baseline's own floor
  ASSERT_TRUE(ev.speedup && ev.time);
  EXPECT_DOUBLE_EQ(*ev.speedup, kEagerMs / ev.time->median_ms);
}

}  // namespace
}  // namespace kf
