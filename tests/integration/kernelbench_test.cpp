// The twelve KernelBench problems on PoCL (issue 31): each imported into a task, then three
// hand-written kernels under tests/data/kernelbench_kernels/PROBLEM evaluated against the PyTorch
// module: `correct.cl` (every size from its scalar arguments) is ok, `hardcoded.cl` (the problem's
// own sizes written in as constants) is incorrect at the derived check sets, and `off_by_one.cl`
// (wrong in exactly one element) is incorrect. Needs python3 with PyTorch and PoCL; skipped, and
// reported as skipped, without them. And part 3: the problems of the library's op classes come
// with starting kernels, each ok against the module (OpenCL's on PoCL, CUDA's on an NVIDIA GPU),
// from which `kfoundry optimize` starts; the CUDA ones also compile for sm_90 with NVRTC, no GPU
// needed, at every parameter's extremes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "backend/cuda/cuda_api.hpp"
#include "core/device_info.hpp"
#include "core/kernel.hpp"
#include "core/task.hpp"
#include "eval/precheck.hpp"
#include "kf_process.hpp"
#include "torch_support.hpp"
#include "tune/space.hpp"

namespace kf {
namespace {

const std::string kKernels = std::string(KF_TEST_DATA) + "/kernelbench_kernels";

class KernelBenchKernels : public ::testing::TestWithParam<std::string> {};

TEST_P(KernelBenchKernels, CorrectHardCodedAndOffByOneOnPoCL) {
  REQUIRE_TORCH_AND_OPENCL();
  std::string dir = testing::Scratch("kbkernels", GetParam());
  Task task = testing::ImportKernelBench(GetParam(), dir);
  for (auto [kernel, want] : {std::pair{"correct", "ok"}, std::pair{"hardcoded", "incorrect"},
                              std::pair{"off_by_one", "incorrect"}}) {
    SCOPED_TRACE(kernel);
    testing::KfResult r;
    nlohmann::json ev = testing::EvalJson(
        dir + "/task", fmt::format("{}/{}/{}.cl", kKernels, GetParam(), kernel), &r);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_TRUE(ev.is_object()) << r.out;
    EXPECT_EQ(ev["status"], want) << ev.value("reason", "");
    if (std::string(kernel) == "correct") {
      // Compared with the module at every check set, fresh seeds each.
      EXPECT_TRUE(ev["max_abs_err"].is_number()) << "no output was compared";
      EXPECT_GE(ev["check_seeds"].size(), task.check_sizes.size()) << ev.dump();
    } else {
      // Wrong values (out of tolerance, or never written), not a crash or a launch error: the
      // verdict starts with the output compared.
      EXPECT_EQ(ev.value("reason", "").rfind("out: ", 0), 0u) << ev.value("reason", "");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    CliImport, KernelBenchKernels,
    ::testing::Values("19_ReLU", "23_Softmax", "36_RMSNorm_", "40_LayerNorm",
                      "47_Sum_reduction_over_a_dimension", "1_Square_matrix_multiplication_",
                      "89_cumsum", "42_Max_Pooling_2D", "95_CrossEntropyLoss",
                      "51_Argmax_over_a_dimension", "97_ScaledDotProductAttention", "33_BatchNorm"),
    [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

struct Starting {
  const char* problem;
  const char* op_class;
};

const Starting kStarting[] = {{"19_ReLU", "elementwise"},
                              {"23_Softmax", "softmax"},
                              {"36_RMSNorm_", "rmsnorm"},
                              {"40_LayerNorm", "layernorm"},
                              {"47_Sum_reduction_over_a_dimension", "reduction"},
                              {"1_Square_matrix_multiplication_", "gemm"},
                              {"89_cumsum", "scan"}};

void PrintTo(const Starting& s, std::ostream* os) {
  *os << s.problem;
}

struct StartingOn {
  std::string backend;  // cuda | opencl
  Starting starting;
};

void PrintTo(const StartingOn& s, std::ostream* os) {
  *os << s.backend << ":" << s.starting.problem;
}

std::vector<StartingOn> StartingCases(const std::string& backend) {
  std::vector<StartingOn> out;
  for (const Starting& s : kStarting) out.push_back({backend, s});
  return out;
}

std::string StartingName(const ::testing::TestParamInfo<StartingOn>& info) {
  return info.param.starting.problem;
}

class KernelBenchStartingKernels : public ::testing::TestWithParam<StartingOn> {};

// Part 3: a problem of one of the library's op classes is imported with that op_class and
// starting kernels in both languages (src/torch/templates filled in), no baseline kernel (PyTorch
// eager is the time to beat), and every starting kernel of
// the device's language is ok against the module at its defaults, at every check set (on PoCL the
// OpenCL ones; on an NVIDIA GPU the CUDA ones, skipped without one).
TEST_P(KernelBenchStartingKernels, AreOfferedAndCorrect) {
  const std::string& backend = GetParam().backend;
  const Starting& starting = GetParam().starting;
  REQUIRE_TORCH();
  if (!testing::HasBackend(backend)) GTEST_SKIP() << "no " << backend << " device on this machine";
  std::string dir = testing::Scratch("kbstart", backend + "_" + starting.problem);
  Task task = testing::ImportKernelBench(starting.problem, dir);
  EXPECT_EQ(task.op_class, starting.op_class);
  Language lang = backend == "cuda" ? Language::kCuda : Language::kOpenCL;
  const std::vector<std::string>& templates = task.templates[lang];
  ASSERT_GE(templates.size(), 2u);
  EXPECT_TRUE(task.baseline.empty());
  for (const std::string& file : templates) {
    SCOPED_TRACE(file);
    Kernel k = LoadKernelFile(task.PathOf(file));
    EXPECT_FALSE(k.params.empty()) << "no @param: nothing for the tuner";
    testing::KfResult r;
    nlohmann::json ev = testing::EvalJson(dir + "/task", task.PathOf(file), &r, "", backend);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_TRUE(ev.is_object()) << r.out;
    EXPECT_EQ(ev["status"], "ok") << ev.value("reason", "") << ev.value("compile_log", "");
    EXPECT_GE(ev["check_seeds"].size(), task.check_sizes.size()) << ev.dump();
  }
}

INSTANTIATE_TEST_SUITE_P(CliImport, KernelBenchStartingKernels,
                         ::testing::ValuesIn(StartingCases("opencl")), StartingName);
INSTANTIATE_TEST_SUITE_P(CudaImport, KernelBenchStartingKernels,
                         ::testing::ValuesIn(StartingCases("cuda")), StartingName);

// The configurations of a kernel the compile test builds: the default, and for each @param its
// smallest and its largest value, each with the other parameters as near the default as the
// constraints allow on an H100 (where an extreme value fits no valid point, the nearest that does).
std::vector<Config> DefaultAndExtremes(const Kernel& k, const SearchSpace& space) {
  std::optional<Point> def = space.FromConfig(k.ResolveConfig({}));
  EXPECT_TRUE(def) << k.path << ": the default configuration breaks a constraint";
  if (!def) return {};
  std::vector<Config> out = {space.ToConfig(*def)};
  for (size_t p = 0; p < space.params().size(); ++p) {
    const std::vector<double>& numeric = space.params()[p].numeric;
    std::vector<int> order(numeric.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return numeric[a] < numeric[b]; });
    for (bool largest : {false, true}) {
      if (largest) std::reverse(order.begin(), order.end());
      for (int value : order) {  // from the extreme inwards
        const Point* best = nullptr;
        int best_distance = 0;
        for (const Point& q : space.points()) {
          if (q[p] != value) continue;
          int distance = 0;
          for (size_t i = 0; i < q.size(); ++i) distance += q[i] != (*def)[i];
          if (!best || distance < best_distance) best = &q, best_distance = distance;
        }
        if (best) {
          out.push_back(space.ToConfig(*best));
          break;
        }
      }
    }
  }
  return out;
}

class KernelBenchCudaStartingKernels : public ::testing::TestWithParam<Starting> {};

// Part 3 for GPUs without one: every CUDA starting kernel of every problem that gets them compiles
// with NVRTC for sm_90 (an H100 or H200) at its default configuration and at each @param's extreme
// values, and at each of those its launches fit an H100 (at most 1024 threads a block, grid
// dimensions within limits) at every check set and at the problem's own sizes. Needs PyTorch (to
// import) and NVRTC, no GPU; skipped, saying which is missing, without them.
TEST_P(KernelBenchCudaStartingKernels, CompileForSm90AtDefaultsAndExtremes) {
  REQUIRE_TORCH();
  std::string error;
  std::unique_ptr<cuda::Nvrtc> nvrtc = cuda::Nvrtc::Load(&error);
  if (!nvrtc) GTEST_SKIP() << "NVRTC not available here: " << error;
  std::string dir = testing::Scratch("kbcompile", GetParam().problem);
  Task task = testing::ImportKernelBench(GetParam().problem, dir);
  const std::vector<std::string>& templates = task.templates[Language::kCuda];
  ASSERT_GE(templates.size(), 2u);
  DeviceInfo h100;
  h100.backend = "cuda";
  h100.compute_units = 132;
  h100.max_work_group_size = 1024;
  h100.local_mem_bytes = 232448;
  h100.sub_group_width = 32;
  std::vector<SizeSet> sets = task.check_sizes;
  sets.push_back(task.BenchSizes("", "gpu"));
  for (const std::string& file : templates) {
    SCOPED_TRACE(file);
    Kernel k = LoadKernelFile(task.PathOf(file));
    ASSERT_EQ(k.language, Language::kCuda);
    EXPECT_FALSE(k.params.empty()) << "no @param: nothing for the tuner";
    std::vector<std::string> entries;
    for (const LaunchRule& l : k.launches) entries.push_back(l.entry);
    SearchSpace space = SearchSpace::FromKernel(k, ConstraintEnv(h100, sets.back().sizes, {}));
    std::vector<Config> configs = DefaultAndExtremes(k, space);
    ASSERT_GE(configs.size(), 1 + 2 * k.params.size());
    for (const Config& c : configs) {
      SCOPED_TRACE(ConfigToString(c));
      cuda::NvrtcOutput out =
          cuda::CompileCuda(*nvrtc, k.source, entries, {c.begin(), c.end()}, 90);
      ASSERT_TRUE(out.ok) << out.log;
      EXPECT_EQ(out.lowered_names, entries);
      for (const SizeSet& set : sets) {
        Env env = SizesEnv(set.sizes);
        BindConfig(c, env);
        for (const LaunchRule& l : k.launches) {
          double threads = 1;
          for (const Expr& b : l.block) threads *= b.Eval(env);
          EXPECT_GE(threads, 1) << l.entry << " at " << set.name;
          EXPECT_LE(threads, 1024) << l.entry << " at " << set.name;
          for (size_t d = 0; d < l.grid.size(); ++d) {
            double blocks = l.grid[d].Eval(env);
            EXPECT_GE(blocks, 1) << l.entry << " at " << set.name;
            EXPECT_LE(blocks, d == 0 ? 2147483647.0 : 65535.0) << l.entry << " at " << set.name;
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(CliImport, KernelBenchCudaStartingKernels, ::testing::ValuesIn(kStarting),
                         [](const ::testing::TestParamInfo<Starting>& info) {
                           return std::string(info.param.problem);
                         });

// Problems of no class the importer recognises get no starting kernels (and op_class "torch"):
// nothing is offered that was not written for the op.
TEST(CliImport, OtherProblemsGetNoStartingKernels) {
  REQUIRE_TORCH();
  for (const char* problem : {"42_Max_Pooling_2D", "51_Argmax_over_a_dimension", "33_BatchNorm"}) {
    SCOPED_TRACE(problem);
    Task task = testing::ImportKernelBench(problem, testing::Scratch("kbstart", problem));
    EXPECT_EQ(task.op_class, "torch");
    EXPECT_TRUE(task.templates.empty());
  }
}

// `kfoundry optimize` with the built-in proposer on an imported problem: it starts from the
// starting kernels (no baseline kernel) and finds a best that is ok, re-verified on fresh inputs
// against the module, its speedup against PyTorch eager.
TEST(CliImport, OptimizeFindsACorrectBestFromTheStartingKernels) {
  REQUIRE_TORCH_AND_OPENCL();
  std::string dir = testing::Scratch("kbstart", "optimize");
  testing::ImportKernelBench("36_RMSNorm_", dir);
  testing::KfResult r = testing::RunKfoundry(
      fmt::format("optimize {0}/task --device opencl --proposer builtin --budget 8 --tune-budget 3 "
                  "--top 1 --repeats 1 --store sqlite:{0}/kf.db --out {0}/out --json",
                  dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(r.json["best"].is_object()) << r.out;
  EXPECT_EQ(r.json["best"]["status"], "ok") << r.json["best"].dump();
  EXPECT_TRUE(r.json["best"]["max_abs_err"].is_number());
  const nlohmann::json& eager = r.json["best"]["external_baselines"].at(0);
  EXPECT_EQ(eager["name"], "torch eager");
  EXPECT_DOUBLE_EQ(r.json["best"]["speedup"].get<double>(), eager["speedup"].get<double>())
      << "eager is the baseline";
  // The best is a starting kernel or a mutation of one, as its file says.
  std::string best = testing::ReadText(r.json["best"]["kernel_file"].get<std::string>());
  EXPECT_NE(best.find("Starting kernel (kfoundry import, op class rmsnorm)"), std::string::npos)
      << best;
}

// A problem with no starting kernels and no baseline kernel, and a proposer that writes kernels
// from the task alone (a command here, as a model would): the search asks it without a parent,
// the PyTorch module in the request as the reference, until a first kernel is correct, then
// builds on that. The command answers the hand-written correct kernel when it sees the module
// and no parent, and nothing new otherwise.
TEST(CliImport, OptimizeWithoutStartingKernelsAsksTheProposerFromScratch) {
  REQUIRE_TORCH_AND_OPENCL();
  std::string dir = testing::Scratch("kbstart", "scratch");
  Task task = testing::ImportKernelBench("42_Max_Pooling_2D", dir);
  ASSERT_TRUE(task.templates.empty() && task.baseline.empty());
  std::ofstream(dir + "/propose.py") << R"(import json, sys
request = json.load(sys.stdin)
reference = (request.get("task") or {}).get("reference_source", "")
if request.get("parent") is None and "class Model" in reference:
    sys.stdout.write(open(sys.argv[1]).read())
else:
    print(json.dumps({"nothing_new": True}))
)";
  testing::KfResult r = testing::RunKfoundry(fmt::format(
      "optimize {0}/task --device opencl --proposer command --proposer-cmd \"python3 "
      "{0}/propose.py {1}/42_Max_Pooling_2D/correct.cl\" --budget 6 --tune-budget 2 --top 1 "
      "--repeats 1 --store sqlite:{0}/kf.db --out {0}/out --json",
      dir, kKernels));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(r.json["best"].is_object()) << r.out;
  EXPECT_EQ(r.json["best"]["status"], "ok") << r.json["best"].dump();
  EXPECT_EQ(r.json["best"]["external_baselines"].at(0)["name"], "torch eager");
  EXPECT_NE(testing::ReadText(r.json["best"]["kernel_file"].get<std::string>()).find("__kernel"),
            std::string::npos);
}

}  // namespace
}  // namespace kf
