// `kfoundry export RUN --torch` (issue 31): a short search of an imported KernelBench problem
// (19_ReLU, 23_Softmax) from our templates of tests/data/torch_export, whose launch rules read
// sizes and parameters, is exported, and a Python script imports the module and compares its
// ModelNew with the problem's Model on fresh random inputs at ragged sizes other than the
// problem's (so the launch rule, the output shapes and the scalar arguments are computed from the
// tensors, not copied from the run), once plainly and once with check=True. Without a GPU that is
// the OpenCL path, through pyopencl on PoCL; of the CUDA path, the launch rule and the source
// load_inline would compile (checked with nvcc) are tested, not a launch. Needs python3 with
// PyTorch and pyopencl, and an OpenCL device or nvcc; skipped, and reported as skipped, without.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "core/task.hpp"
#include "kf_process.hpp"
#include "torch/export_module.hpp"
#include "torch_support.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;
using testing::RunKfoundry;

const std::string kData = KF_TEST_DATA;

// The first of kfoundry's interpreters (KF_PYTHON, python3, /usr/bin/python3) with PyTorch and
// pyopencl, or "".
std::string PythonWithTorchAndOpenCL() {
  static const std::string found = testing::FirstPythonWith("torch, pyopencl");
  return found;
}

#define REQUIRE_PYTHON_AND_OPENCL()                                                    \
  if (PythonWithTorchAndOpenCL().empty())                                              \
    GTEST_SKIP() << "no python3 with PyTorch and pyopencl (Debian: python3-torch, "    \
                    "python3-pyopencl); the exported module's OpenCL path needs them"; \
  if (!testing::HasBackend("opencl")) GTEST_SKIP() << "no OpenCL device (PoCL)"

// Imports `problem`, gives the task `kernel` (a template) as its baseline kernel, runs a short
// search (the kernel tuned and mutated: every candidate keeps its parameters) and exports its
// best; returns the module's path.
// `kernel` is the task's baseline, or, with `baseline` given, its one template beside it.
std::string SearchAndExport(const std::string& problem, const std::string& kernel,
                            const std::string& dir, nlohmann::json* best,
                            const std::string& baseline) {
  testing::KfResult r =
      RunKfoundry(fmt::format("import {}/kernelbench/{}.py -o {}/task", kData, problem, dir));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const std::string& file : {kernel, baseline}) {  // a starting kernel may have its name
    if (!file.empty())
      fs::copy_file(kData + "/torch_export/" + file, dir + "/task/" + file,
                    fs::copy_options::overwrite_existing);
  }
  std::string toml = testing::ReadText(dir + "/task/task.toml");
  // Our kernel alone: import's starting kernels (a baseline and templates) left out.
  toml = std::regex_replace(toml, std::regex("\n(baseline|templates) = \\{[^\n]*"), "");
  toml = std::regex_replace(
      toml, std::regex("reference = \\{ torch = \"model.py\" \\}"),
      "reference = { torch = \"model.py\" }\nbaseline = { opencl = \"" +
          (baseline.empty() ? kernel : baseline) + "\" }" +
          (baseline.empty() ? "" : "\ntemplates = { opencl = [\"" + kernel + "\"] }"));
  std::ofstream(dir + "/task/task.toml") << toml;
  r = RunKfoundry(
      fmt::format("optimize {}/task --device opencl --budget 4 --tune-budget 3 --top 1 --repeats 1 "
                  "--runs 5 --warmup 1 --store sqlite:{}/kf.db --run exp --out {}/out --json",
                  dir, dir, dir));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  *best = r.json.is_object() ? r.json["best"] : nlohmann::json();
  r = RunKfoundry(
      fmt::format("export exp --torch --store sqlite:{}/kf.db -o {}/exported.py", dir, dir));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("exported"), std::string::npos) << r.out;
  return dir + "/exported.py";
}

// Runs check_export.py on the module at `sizes`; its JSON answer (null when it failed).
nlohmann::json CompareWithModel(const std::string& module, const std::string& problem,
                                const std::string& sizes, std::string* output) {
  std::string cmd =
      fmt::format("{} {}/torch_export/check_export.py {} {}/kernelbench/{}.py '{}' 2>&1",
                  PythonWithTorchAndOpenCL(), kData, module, kData, problem, sizes);
  FILE* pipe = popen(cmd.c_str(), "r");
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), pipe)) > 0;) output->append(buf, n);
  int status = pclose(pipe);
  if (status != 0) return nullptr;
  std::string last = output->substr(output->rfind('{'));
  return nlohmann::json::parse(last, nullptr, false);
}

struct Case {
  std::string problem, kernel, sizes, shape;
  double max_err;         // against Model's output
  std::string baseline;   // "": `kernel` is the baseline; else `kernel` is a template
  std::string in_module;  // text the exported module must hold
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.problem << " with " << c.kernel;
}

class TorchExport : public ::testing::TestWithParam<Case> {};

TEST_P(TorchExport, ModelNewReturnsWhatModelReturnsOnFreshInputs) {
  REQUIRE_PYTHON_AND_OPENCL();
  const Case& c = GetParam();
  std::string dir = testing::Scratch("export", c.problem);
  nlohmann::json best;
  std::string module = SearchAndExport(c.problem, c.kernel, dir, &best, c.baseline);
  ASSERT_TRUE(best.is_object()) << "the search found no verified best";
  ASSERT_TRUE(fs::exists(module));
  std::string text = testing::ReadText(module);
  EXPECT_NE(text.find("class ModelNew(nn.Module)"), std::string::npos);
  EXPECT_NE(text.find(c.in_module), std::string::npos) << c.in_module;
  // The winning configuration is what the module compiles with.
  for (const auto& [name, value] : best["config"].items())
    EXPECT_NE(text.find(fmt::format("(\"{}\", \"{}\")", name,
                                    value.is_string() ? value.get<std::string>() : value.dump())),
              std::string::npos)
        << name;
  std::string output;
  nlohmann::json answer = CompareWithModel(module, c.problem, c.sizes, &output);
  ASSERT_TRUE(answer.is_object()) << output;
  EXPECT_EQ(answer["shape"].dump(), c.shape) << output;
  EXPECT_LE(answer["max_abs_err"].get<double>(), c.max_err) << output;
}

INSTANTIATE_TEST_SUITE_P(
    CliExport, TorchExport,
    ::testing::Values(Case{"19_ReLU", "relu_block.cl", R"({"batch_size": 13, "dim": 1001})",
                           "[13,1001]", 1e-4, "", ""},
                      Case{"23_Softmax", "softmax_group.cl", R"({"batch_size": 37, "dim": 333})",
                           "[37,333]", 1e-4, "", ""},
                      // Two launches and a scratch buffer (sums of up to 300 values in another
                      // order than PyTorch's).
                      Case{"89_cumsum", "cumsum_two_pass.cl",
                           R"({"batch_size": 7, "row_shape": [300]})", "[7,300]", 1e-3,
                           "cumsum_quadratic.cl",
                           "_LAUNCHES = [(\"scan_chunks\", _launch_0), (\"add_offsets\", "
                           "_launch_1), ]"}),
    [](const ::testing::TestParamInfo<Case>& i) {
      return i.param.problem.substr(i.param.problem.find('_') + 1);
    });

// Without --torch, or for a run the store lacks, export says so (exit code 2).
TEST(CliExportRefuses, WithoutTorchOrRun) {
  std::string dir = testing::Scratch("export", "refuses");
  testing::KfResult r = RunKfoundry(fmt::format("export none --store sqlite:{}/kf.db", dir));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--torch"), std::string::npos) << r.err;
  r = RunKfoundry(fmt::format("export none --torch --store sqlite:{}/kf.db", dir));
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

// The CUDA path cannot run without a GPU; what can be checked here is checked: a CUDA kernel with
// a parameter and dynamic shared memory is exported (at a configuration other than its default),
// the module imports, its launch rule at fresh sizes is what the task's expressions give, and the
// source load_inline would compile (the kernel and its launcher) compiles with nvcc against a
// stand-in for PyTorch's two headers (tests/data/torch_export/nvcc_stub). Needs python3 with
// PyTorch and nvcc; skipped without them.
TEST(CliExportCudaSource, LaunchRuleAndLauncherOfACudaKernel) {
  const std::string python = PythonWithTorchAndOpenCL();
  if (python.empty()) GTEST_SKIP() << "no python3 with PyTorch (and pyopencl)";
  if (std::system("nvcc --version >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "no nvcc to compile the exported CUDA launcher";
  std::string dir = testing::Scratch("export", "cuda");
  testing::KfResult r =
      RunKfoundry(fmt::format("import {}/kernelbench/19_ReLU.py -o {}/task", kData, dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Task task = LoadTask(dir + "/task");
  Kernel kernel = LoadKernelFile(kData + "/torch_export/relu_shared.cu");
  ExportOrigin origin{"manual",        "no device", "test",
                      "exported_cuda", 1.0,         task.BenchSizes("", "gpu")};
  std::ofstream(dir + "/exported_cuda.py")
      << TorchModuleSource(task, kernel, {{"BLOCK", "64"}}, origin);
  std::string out;
  std::string cmd = fmt::format(
      "{} {}/torch_export/cuda_source.py {}/exported_cuda.py {}/gen.cu "
      "'{{\"batch_size\": 13, \"dim\": 1001}}' 2>&1",
      python, kData, dir, dir);
  FILE* pipe = popen(cmd.c_str(), "r");
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), pipe)) > 0;) out.append(buf, n);
  ASSERT_EQ(pclose(pipe), 0) << out;
  nlohmann::json launch = nlohmann::json::parse(out.substr(out.rfind('{')), nullptr, false);
  ASSERT_TRUE(launch.is_object()) << out;
  EXPECT_EQ(launch["grid"].dump(), "[204]");  // ceil(13 * 1001 / 64)
  EXPECT_EQ(launch["block"].dump(), "[64]");
  EXPECT_EQ(launch["shared"], 256);
  EXPECT_EQ(launch["defines"].dump(), R"(["-DBLOCK=64"])");
  std::string nvcc = fmt::format(
      "nvcc -std=c++17 -I{}/torch_export/nvcc_stub -DBLOCK=64 -c {}/gen.cu -o {}/gen.o 2>&1", kData,
      dir, dir);
  EXPECT_EQ(std::system(nvcc.c_str()), 0) << nvcc;
  EXPECT_NE(testing::ReadText(dir + "/gen.cu").find("cudaLaunchKernel"), std::string::npos);
}

}  // namespace
}  // namespace kf
