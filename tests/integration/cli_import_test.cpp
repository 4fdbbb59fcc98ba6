// `kfoundry import` (issue 31): the twelve problems in KernelBench's form under
// tests/data/kernelbench (our own, each mirroring a KernelBench level-1 problem) import into task
// folders that load, with the sizes, shapes, distributions, parameters, size sets and tolerances
// each problem implies; a problem that cannot be imported (a syntax error, no Model, a non-tensor
// input, a data-dependent output shape, a reference that raises, and mutations of a valid file) is
// exit code 2 with one line naming the file. Needs python3 with PyTorch; skipped, and reported as
// skipped, without it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "core/task.hpp"
#include "kf_process.hpp"
#include "torch/python_process.hpp"
#include "torch_support.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;
using testing::EvalJson;
using testing::kProblems;
using testing::RunKfoundry;
// The malformed problems, and a strided pooling window.
const std::string kBad = std::string(KF_TEST_DATA) + "/torch_import";

int Lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n + (!s.empty() && s.back() != '\n');
}

const ArgSpec& Arg(const Task& t, const std::string& name) {
  for (const ArgSpec& a : t.args) {
    if (a.name == name) return a;
  }
  ADD_FAILURE() << "no argument " << name;
  return t.args.front();
}

std::vector<std::string> ShapeOf(const ArgSpec& a) {
  std::vector<std::string> out;
  for (const Expr& e : a.shape) out.push_back(e.text());
  return out;
}

Task Import(const std::string& problem, const std::string& dir) {
  return testing::ImportKernelBench(problem, dir);
}

class KernelBench : public ::testing::TestWithParam<std::string> {};

// Every problem: a task that loads, the torch reference copied in, sizes named after the file's
// constants at the problem's own values (the benchmark set for GPUs), a smaller CPU set, check
// sets that differ from the benchmark set, and the size scalars last in the signature.
TEST_P(KernelBench, ImportsIntoATaskThatLoads) {
  REQUIRE_TORCH();
  std::string dir = testing::Scratch("import", GetParam());
  Task t = Import(GetParam(), dir);
  EXPECT_EQ(t.torch_reference, "model.py");
  EXPECT_EQ(testing::ReadText(dir + "/task/model.py"),
            testing::ReadText(kProblems + "/" + GetParam() + ".py"));
  ASSERT_FALSE(t.size_names.empty());
  const SizeSet& bench = t.BenchSizes("", "gpu");
  const SizeSet& cpu = t.BenchSizes("", "cpu");
  EXPECT_EQ(bench.name, "problem");
  EXPECT_EQ(cpu.name, "cpu");
  ASSERT_GE(t.check_sizes.size(), 2u);
  for (const SizeSet& c : t.check_sizes) EXPECT_NE(c.sizes, bench.sizes) << c.name;
  // The sizes are the last arguments, in the file's order.
  size_t n = t.size_names.size();
  ASSERT_GT(t.args.size(), n);
  for (size_t i = 0; i < n; ++i) {
    const ArgSpec& a = t.args[t.args.size() - n + i];
    EXPECT_FALSE(a.is_buffer);
    EXPECT_EQ(a.name, t.size_names[i]);
  }
  // PoCL's set holds at most a quarter million elements in all; the problem's own is larger.
  double cpu_elements = 0, bench_elements = 0;
  for (const ArgSpec& a : t.args) {
    if (!a.is_buffer) continue;
    cpu_elements += static_cast<double>(ElementCount(a, SizesEnv(cpu.sizes)));
    bench_elements += static_cast<double>(ElementCount(a, SizesEnv(bench.sizes)));
  }
  EXPECT_LE(cpu_elements, 1 << 18);
  EXPECT_GT(bench_elements, cpu_elements);
  Tolerance tol = t.tolerance.At(bench.sizes);
  EXPECT_DOUBLE_EQ(tol.atol, 1e-4);  // every problem here is fp32
  EXPECT_DOUBLE_EQ(tol.rtol, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(CliImport, KernelBench,
                         ::testing::Values("19_ReLU", "23_Softmax", "36_RMSNorm_", "40_LayerNorm",
                                           "47_Sum_reduction_over_a_dimension",
                                           "1_Square_matrix_multiplication_", "89_cumsum",
                                           "42_Max_Pooling_2D", "95_CrossEntropyLoss",
                                           "51_Argmax_over_a_dimension",
                                           "97_ScaledDotProductAttention", "33_BatchNorm"));

// What each kind of problem brings: shapes as expressions of the sizes, parameters and buffers as
// inputs after get_inputs', integer outputs, integer inputs drawn in range, 0-d outputs.
TEST(CliImport, ShapesParametersAndDistributionsFollowTheProblem) {
  REQUIRE_TORCH();
  std::string dir = testing::Scratch("import", "details");

  Task relu = Import("19_ReLU", dir + "/relu");
  ASSERT_EQ(relu.args.size(), 4u);  // x, out, batch_size, dim
  EXPECT_EQ(relu.args[0].name, "x");
  EXPECT_EQ(relu.args[0].init.kind, InitSpec::Kind::kUniform);  // torch.rand: [0, 1)
  EXPECT_EQ(relu.args[0].init.a, 0.0);
  EXPECT_EQ(relu.args[0].init.b, 1.0);
  EXPECT_EQ(relu.args[1].role, ArgRole::kOut);
  EXPECT_EQ(relu.size_names, (std::vector<std::string>{"batch_size", "dim"}));
  EXPECT_EQ(relu.BenchSizes("problem", "").sizes.at("dim"), 262144);

  Task pool = Import("42_Max_Pooling_2D", dir + "/pool");
  EXPECT_EQ(ShapeOf(Arg(pool, "out")),
            (std::vector<std::string>{"batch_size", "channels", "height - 2", "width - 2"}));
  // kernel_size, stride, padding and dilation decide no input's shape: not sizes.
  EXPECT_EQ(pool.size_names,
            (std::vector<std::string>{"batch_size", "channels", "height", "width"}));

  Task sum = Import("47_Sum_reduction_over_a_dimension", dir + "/sum");
  EXPECT_EQ(ShapeOf(Arg(sum, "out")), (std::vector<std::string>{"batch_size", "1", "dim2"}));

  Task argmax = Import("51_Argmax_over_a_dimension", dir + "/argmax");
  EXPECT_EQ(Arg(argmax, "out").dtype, DType::kI64);
  EXPECT_EQ(ShapeOf(Arg(argmax, "out")), (std::vector<std::string>{"batch_size", "dim2"}));

  Task cumsum = Import("89_cumsum", dir + "/cumsum");  // row_shape = (24576,) is a size too
  EXPECT_EQ(cumsum.size_names, (std::vector<std::string>{"batch_size", "row_shape_0"}));
  EXPECT_EQ(cumsum.BenchSizes("problem", "").sizes.at("row_shape_0"), 24576);

  Task ce = Import("95_CrossEntropyLoss", dir + "/ce");
  EXPECT_EQ(ce.args[0].name, "predictions");  // forward's parameter names
  const ArgSpec& targets = Arg(ce, "targets");
  EXPECT_EQ(targets.dtype, DType::kI64);
  // torch.randint(0, num_classes, ...): each set's own class count bounds the targets.
  EXPECT_EQ(targets.init.kind, InitSpec::Kind::kRandInt);
  EXPECT_EQ(targets.init.low.text(), "0");
  EXPECT_EQ(targets.init.high.text(), "num_classes");
  EXPECT_EQ(ShapeOf(Arg(ce, "out")), (std::vector<std::string>{"1"}));  // the 0-d loss

  Task bn = Import("33_BatchNorm", dir + "/bn");
  std::vector<std::string> names;
  for (const ArgSpec& a : bn.args) names.push_back(a.name);
  EXPECT_EQ(names, (std::vector<std::string>{"x", "bn_weight", "bn_bias", "bn_running_mean",
                                             "bn_running_var", "bn_num_batches_tracked", "out",
                                             "batch_size", "features", "dim1", "dim2"}));
  EXPECT_EQ(ShapeOf(Arg(bn, "bn_weight")), (std::vector<std::string>{"features"}));
  // A parameter built as ones is drawn around one; a buffer keeps the module's value.
  EXPECT_EQ(Arg(bn, "bn_weight").init.kind, InitSpec::Kind::kUniform);
  EXPECT_EQ(Arg(bn, "bn_weight").init.a, 0.5);
  EXPECT_EQ(Arg(bn, "bn_running_var").init.kind, InitSpec::Kind::kConstant);
  EXPECT_EQ(Arg(bn, "bn_running_var").init.a, 1.0);

  // A strided window's output is a floor of the size, told apart from forms that fit the probes
  // alone (x // 3 and (x + 1) // 3 differ at a third of the sizes).
  testing::KfResult r =
      RunKfoundry(fmt::format("import {}/strided_pool.py -o {}/strided", kBad, dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Task strided = LoadTask(dir + "/strided");
  EXPECT_EQ(ShapeOf(Arg(strided, "out")),
            (std::vector<std::string>{"batch_size", "channels", "height // 3", "width // 3"}));
  EXPECT_EQ(strided.args[0].init.kind, InitSpec::Kind::kNormal);  // torch.randn

  Task ln = Import("40_LayerNorm", dir + "/ln");
  EXPECT_EQ(ShapeOf(Arg(ln, "ln_weight")), (std::vector<std::string>{"features", "dim1", "dim2"}));
}

// An existing task folder is not overwritten; the default folder is the file's stem.
TEST(CliImport, DefaultFolderAndNoOverwrite) {
  REQUIRE_TORCH();
  std::string dir = testing::Scratch("import", "folder");
  testing::KfResult r =
      RunKfoundry(fmt::format("import {}/36_RMSNorm_.py", kProblems), "cd " + dir + " &&");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/36_RMSNorm/task.toml"));
  EXPECT_EQ(LoadTask(dir + "/36_RMSNorm").name, "36_RMSNorm");
  r = RunKfoundry(fmt::format("import {}/36_RMSNorm_.py", kProblems), "cd " + dir + " &&");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("already holds a task.toml"), std::string::npos) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
}

// The torch reference in the evaluator (issue 31, parts 1 and 2): an imported task's kernels are
// checked against its PyTorch module, run by the reference process on the inputs the kernel got,
// and timed against PyTorch eager (and torch.compile where this PyTorch has it) on the same device.
const std::string kTorchRef = std::string(KF_TEST_DATA) + "/torch_reference";
const std::string kKernels = std::string(KF_TEST_DATA) + "/kernelbench_kernels";

// A correct ReLU, a correct row softmax and a correct pooling are ok against the PyTorch module;
// the figures say the outputs were compared, and PyTorch's times are the external baselines,
// timed on the CPU and labelled so. An imported task has no baseline kernel (with starting
// kernels or without): PyTorch eager is the baseline itself.
TEST(TorchReference, CorrectKernelsAreOk) {
  REQUIRE_TORCH_AND_OPENCL();
  for (auto [problem, kernel] :
       {std::pair{"19_ReLU", kTorchRef + "/relu.cl"},
        std::pair{"23_Softmax", kTorchRef + "/softmax_rows.cl"},
        std::pair{"42_Max_Pooling_2D", kKernels + "/42_Max_Pooling_2D/correct.cl"}}) {
    SCOPED_TRACE(problem);
    std::string dir = testing::Scratch("torchref", problem);
    Task task = Import(problem, dir);
    testing::KfResult r;
    nlohmann::json ev = EvalJson(dir + "/task", kernel, &r);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_TRUE(ev.is_object()) << r.out;
    EXPECT_EQ(ev["status"], "ok") << ev["reason"];
    EXPECT_TRUE(ev["max_abs_err"].is_number()) << "no output was compared";
    EXPECT_LE(ev["max_abs_err"].get<double>(), 1e-4);
    EXPECT_GE(ev["check_seeds"].size(), 3u);  // every check set, fresh seeds
    // PyTorch eager, on the CPU, named as such.
    const nlohmann::json& b = ev["external_baselines"];
    ASSERT_EQ(b.size(), 2u) << ev.dump();
    EXPECT_EQ(b[0]["name"], "torch eager");
    EXPECT_NE(b[0]["device"].get<std::string>().find("cpu (PyTorch"), std::string::npos);
    ASSERT_TRUE(b[0]["time_ms"].is_object()) << b.dump();
    EXPECT_GT(b[0]["time_ms"]["median"].get<double>(), 0);
    EXPECT_GT(b[0]["speedup"].get<double>(), 0);
    EXPECT_TRUE(task.baseline.empty());
    EXPECT_EQ(ev["baseline_time_ms"]["median"], b[0]["time_ms"]["median"]);
    EXPECT_DOUBLE_EQ(ev["speedup"].get<double>(), b[0]["speedup"].get<double>());
    EXPECT_EQ(b[1]["name"], "torch.compile");
    // Timed where this PyTorch has torch.compile, else said why not (Debian 12's 1.13 has none).
    EXPECT_TRUE(b[1]["time_ms"].is_object() || !b[1].value("unavailable", "").empty()) << b.dump();
  }
}

// The text output names both baselines and the device PyTorch ran on.
TEST(TorchReference, TextOutputNamesTheBaselines) {
  REQUIRE_TORCH_AND_OPENCL();
  std::string dir = testing::Scratch("torchref", "text");
  Import("19_ReLU", dir);
  testing::KfResult r = RunKfoundry(
      fmt::format("eval {}/task {}/relu.cl --device opencl --runs 10 --warmup 1", dir, kTorchRef));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("status      ok"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vs torch eager"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("on cpu (PyTorch"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vs torch.compile"), std::string::npos) << r.out;
}

// A kernel that differs from the module in one element is incorrect: the reference really is the
// module, run on the inputs the kernel got.
TEST(TorchReference, WrongKernelIsIncorrect) {
  REQUIRE_TORCH_AND_OPENCL();
  std::string dir = testing::Scratch("torchref", "wrong");
  Import("19_ReLU", dir);
  testing::KfResult r;
  nlohmann::json ev = EvalJson(dir + "/task", kTorchRef + "/relu_last_wrong.cl", &r);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(ev.is_object()) << r.out;
  EXPECT_EQ(ev["status"], "incorrect") << ev.dump();
  EXPECT_NEAR(ev["max_abs_err"].get<double>(), 1.0, 1e-3);
}

// A module whose forward raises: the run stops with one clear error naming the file and the
// Python error, not a crash.
TEST(TorchReference, RaisingModuleIsNamed) {
  REQUIRE_TORCH_AND_OPENCL();
  std::string dir = testing::Scratch("torchref", "raises");
  Import("19_ReLU", dir);
  fs::copy_file(kTorchRef + "/raises.py", dir + "/task/model.py",
                fs::copy_options::overwrite_existing);
  testing::KfResult r;
  EvalJson(dir + "/task", kTorchRef + "/relu.cl", &r);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.exit_code, 128) << "killed by a signal";
  EXPECT_NE(r.err.find("/model.py: torch reference: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("RuntimeError: this reference gives up on purpose"), std::string::npos)
      << r.err;
}

// A module whose forward never returns: the reference process is killed at its deadline
// ($KF_TORCH_TIMEOUT) and the error says so, naming the file.
TEST(TorchReference, HangingModuleHitsTheDeadline) {
  REQUIRE_TORCH_AND_OPENCL();
  std::string dir = testing::Scratch("torchref", "hangs");
  Import("19_ReLU", dir);
  fs::copy_file(kTorchRef + "/hangs.py", dir + "/task/model.py",
                fs::copy_options::overwrite_existing);
  testing::KfResult r;
  auto start = std::chrono::steady_clock::now();
  EvalJson(dir + "/task", kTorchRef + "/relu.cl", &r, "KF_TORCH_TIMEOUT=3");
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.exit_code, 128) << "killed by a signal";
  EXPECT_NE(r.err.find("/model.py: torch reference: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no answer within 3 s"), std::string::npos) << r.err;
  EXPECT_LT(took, 60) << "the deadline did not end it";
}

// The reference runner (kb_reference.py, the first piece of the reference process): 33_BatchNorm
// at a small set runs on the inputs and with the weight and bias it is given (not the file's own
// draw nor the module's initial values), in training mode; a file of the wrong size is refused
// with one line naming the argument.
TEST(CliImport, ReferenceRunnerUsesTheGivenInputsAndParameters) {
  REQUIRE_TORCH();
  std::string dir = testing::Scratch("import", "reference");
  const int n = 3, c = 5, h = 4, w = 6, per = n * h * w;
  std::vector<float> x(n * c * h * w), weight(c), bias(c), zeros(c, 0.0f), ones(c, 1.0f);
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& v : x) v = normal(rng);
  for (int k = 0; k < c; ++k) {
    weight[k] = 0.5f + 0.25f * static_cast<float>(k);
    bias[k] = -0.5f + 0.2f * static_cast<float>(k);
  }
  int64_t tracked = 0;
  auto write = [&](const std::string& name, const void* data, size_t bytes) {
    std::ofstream(dir + "/" + name, std::ios::binary)
        .write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
    return dir + "/" + name;
  };
  auto arg = [](const std::string& name, const std::string& role, const std::string& dtype,
                std::vector<int> shape, const std::string& file) {
    return nlohmann::json{
        {"name", name}, {"role", role}, {"dtype", dtype}, {"shape", shape}, {"file", file}};
  };
  nlohmann::json request = {
      {"problem", kProblems + "/33_BatchNorm.py"},
      {"sizes", {{"batch_size", n}, {"features", c}, {"dim1", h}, {"dim2", w}}},
      {"args",
       {arg("x", "in", "f32", {n, c, h, w}, write("x.bin", x.data(), x.size() * 4)),
        arg("bn_weight", "in", "f32", {c}, write("w.bin", weight.data(), c * 4)),
        arg("bn_bias", "in", "f32", {c}, write("b.bin", bias.data(), c * 4)),
        arg("bn_running_mean", "in", "f32", {c}, write("rm.bin", zeros.data(), c * 4)),
        arg("bn_running_var", "in", "f32", {c}, write("rv.bin", ones.data(), c * 4)),
        arg("bn_num_batches_tracked", "in", "i64", {1}, write("nb.bin", &tracked, 8)),
        arg("out", "out", "f32", {n, c, h, w}, dir + "/out.bin"),
        {{"name", "batch_size"}, {"dtype", "i32"}}}}};
  std::ofstream(dir + "/request.json") << request.dump();
  PythonRun run =
      RunTorchHelper(TorchHelpersDir() + "/kb_reference.py", {dir + "/request.json"}, 120);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err << run.failure;
  std::vector<float> out(x.size());
  std::ifstream(dir + "/out.bin", std::ios::binary)
      .read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size() * 4));
  double worst = 0;
  for (int k = 0; k < c; ++k) {  // batch statistics per channel, biased variance, eps 1e-5
    double sum = 0, sq = 0;
    for (int b = 0; b < n; ++b) {
      for (int i = 0; i < h * w; ++i) {
        double v = x[(b * c + k) * h * w + i];
        sum += v;
        sq += v * v;
      }
    }
    double mean = sum / per, var = sq / per - mean * mean;
    for (int b = 0; b < n; ++b) {
      for (int i = 0; i < h * w; ++i) {
        size_t at = static_cast<size_t>((b * c + k) * h * w + i);
        double want = (x[at] - mean) / std::sqrt(var + 1e-5) * weight[k] + bias[k];
        worst = std::max(worst, std::fabs(out[at] - want));
      }
    }
  }
  EXPECT_LT(worst, 1e-4);

  request["args"][1]["shape"] = {c + 1};  // the file holds c elements
  std::ofstream(dir + "/request.json") << request.dump();
  run = RunTorchHelper(TorchHelpersDir() + "/kb_reference.py", {dir + "/request.json"}, 120);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.out.find("bn_weight: " + dir + "/w.bin holds 20 bytes"), std::string::npos)
      << run.out;
  EXPECT_EQ(Lines(run.out), 1) << run.out;
}

struct Unimportable {
  const char* file;
  const char* why;
};

class CliImportRefuses : public ::testing::TestWithParam<Unimportable> {};

// Exit code 2 and one line: "error: FILE: import: why".
TEST_P(CliImportRefuses, WithOneLineNamingTheFile) {
  REQUIRE_TORCH();
  std::string dir = testing::Scratch("import", "bad");
  std::string file = kBad + "/" + GetParam().file;
  testing::KfResult r = RunKfoundry(fmt::format("import {} -o {}/task", file, dir));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("error: " + file + ": import: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(GetParam().why), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/task/task.toml"));
}

INSTANTIATE_TEST_SUITE_P(
    CliImport, CliImportRefuses,
    ::testing::Values(Unimportable{"syntax_error.py", "line 5: syntax error"},
                      Unimportable{"no_model.py", "no class Model"},
                      Unimportable{"non_tensor_input.py", "element 1 is a float, not a tensor"},
                      Unimportable{"data_dependent.py", "the output's shape depends on the data"},
                      Unimportable{"not_random.py", "made by torch.arange"},
                      Unimportable{"raises.py", "this reference is broken"},
                      Unimportable{"no_such_file.py", "no such file"}));

// The importer's inputs fuzzed: a valid problem with bytes deleted, duplicated or replaced, or cut
// short. Each is imported or refused (exit 0 or 2) with one line on stderr; never a crash, a hang
// or another exit code. The seed is fixed, so a failure repeats.
TEST(CliImport, MutatedProblemsAreImportedOrRefusedInOneLine) {
  REQUIRE_TORCH();
  std::string dir = testing::Scratch("import", "fuzz");
  std::string text = testing::ReadText(kProblems + "/42_Max_Pooling_2D.py");
  std::mt19937 rng(31);
  const std::string noise = "()[]:,=.*\n 0123456789abcxyz_\"'#\\";
  int refused = 0;
  for (int i = 0; i < 12; ++i) {
    std::string m = text;
    std::uniform_int_distribution<size_t> at(0, m.size() - 1);
    switch (i % 4) {
      case 0: m.erase(at(rng), 1 + rng() % 8); break;
      case 1: m.insert(at(rng), m.substr(at(rng), 1 + rng() % 12)); break;
      case 2:
        for (int k = 0; k < 3; ++k) m[at(rng)] = noise[rng() % noise.size()];
        break;
      default: m.resize(at(rng)); break;
    }
    std::string file = fmt::format("{}/mutant{}.py", dir, i);
    std::ofstream(file) << m;
    testing::KfResult r =
        RunKfoundry(fmt::format("import {} -o {}/task{} --timeout 120", file, dir, i));
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 2) << file << " exit " << r.exit_code << r.err;
    if (r.exit_code == 2) {
      ++refused;
      EXPECT_EQ(Lines(r.err), 1) << file << ": " << r.err;
      EXPECT_EQ(r.err.rfind("error: " + file + ": ", 0), 0u) << r.err;
    } else {
      EXPECT_NO_THROW(LoadTask(fmt::format("{}/task{}", dir, i))) << file;
    }
  }
  EXPECT_GT(refused, 0);  // the mutations do break files
}

}  // namespace
}  // namespace kf
