#include "core/task.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/input_error.hpp"
#include "core/task_library.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;

TEST(Task, LoadsBundledRope) {
  Task t = LoadTask(std::string(KF_TASKS) + "/rope_llama3");
  EXPECT_EQ(t.name, "rope_llama3");
  EXPECT_EQ(t.op_class, "rope");
  ASSERT_EQ(t.args.size(), 11u);
  EXPECT_EQ(t.args[2].name, "cos");
  EXPECT_EQ(t.args[2].init.kind, InitSpec::Kind::kFormula);
  EXPECT_GE(t.check_sizes.size(), 2u);
  EXPECT_EQ(t.BenchSizes("", "gpu").sizes.at("S"), 4096);
  EXPECT_EQ(t.BenchSizes("", "cpu").name, "cpu");
  EXPECT_EQ(t.BenchSizes("record", "cpu").name, "record");
  EXPECT_THROW(t.BenchSizes("nope", "cpu"), InputError);
  EXPECT_EQ(t.Languages().size(), 2u);
  Env env = SizesEnv(t.BenchSizes("record", "gpu").sizes);
  EXPECT_EQ(ElementCount(t.args[0], env), 8LL * 4096 * 32 * 128);
  EXPECT_EQ(t.min_bytes.Eval(env), 4.0 * 8 * 4096 * 40 * 128 + 8.0 * 4096 * 64);
}

TEST(Task, EveryBundledKernelMatchesTheSignature) {
  Task t = LoadTask(std::string(KF_TASKS) + "/rope_llama3");
  std::vector<std::string> files;
  for (const auto& [l, f] : t.reference) files.push_back(f);
  for (const auto& [l, f] : t.baseline) files.push_back(f);
  for (const auto& [l, fs] : t.templates) files.insert(files.end(), fs.begin(), fs.end());
  for (const auto& f : files) {
    Kernel k = LoadKernelFile(t.PathOf(f));
    EXPECT_NO_THROW(CheckKernelSignature(t, k)) << f;
  }
}

TEST(Task, FindsBundledTaskByName) {
  setenv("KF_TASKS_DIR", KF_TASKS, 1);
  EXPECT_EQ(FindTask("rope_llama3").name, "rope_llama3");
  EXPECT_THROW(FindTask("no_such_task"), InputError);
  EXPECT_FALSE(BundledTasks().empty());
}

// Writes a task folder from the rope task with one edit and returns the load error.
class MalformedTask : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kf_task_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::copy(std::string(KF_TASKS) + "/rope_llama3", dir_);
    std::ifstream in(dir_ / "task.toml");
    std::stringstream ss;
    ss << in.rdbuf();
    original_ = ss.str();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string ErrorAfter(const std::string& from, const std::string& to) {
    std::string text = original_;
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    std::ofstream(dir_ / "task.toml") << text;
    try {
      LoadTask(dir_.string());
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }

  int LineOf(const std::string& needle) {
    size_t at = original_.find(needle);
    return 1 + static_cast<int>(
                   std::count(original_.begin(), original_.begin() + static_cast<long>(at), '\n'));
  }

  fs::path dir_;
  std::string original_;
};

TEST_F(MalformedTask, TomlSyntaxErrorNamesTheLine) {
  std::string e = ErrorAfter("op_class = \"rope\"", "op_class = \"rope");
  EXPECT_NE(e.find("task.toml:" + std::to_string(LineOf("op_class"))), std::string::npos) << e;
}

TEST_F(MalformedTask, MissingField) {
  std::string e = ErrorAfter("op_class = \"rope\"\n", "");
  EXPECT_NE(e.find("op_class: missing"), std::string::npos) << e;
}

TEST_F(MalformedTask, UnknownDType) {
  std::string e = ErrorAfter("type = \"f16\"", "type = \"f17\"");
  EXPECT_NE(e.find("args.q.type"), std::string::npos) << e;
  EXPECT_NE(e.find("f17"), std::string::npos) << e;
}

TEST_F(MalformedTask, ShapeNamesUndeclaredSize) {
  std::string e =
      ErrorAfter("shape = [\"B\", \"S\", \"Hq\", \"D\"]", "shape = [\"B\", \"T\", \"Hq\", \"D\"]");
  EXPECT_NE(e.find("args.q.shape"), std::string::npos) << e;
  EXPECT_NE(e.find("'T'"), std::string::npos) << e;
}

TEST_F(MalformedTask, ShapeThatIsNotAnInteger) {
  std::string e = ErrorAfter("shape = [\"S\", \"D // 2\"]", "shape = [\"S\", \"D / 3\"]");
  EXPECT_NE(e.find("args.cos"), std::string::npos) << e;
  EXPECT_NE(e.find("not an integer"), std::string::npos) << e;
}

TEST_F(MalformedTask, BadRole) {
  std::string e = ErrorAfter("role = \"out\"", "role = \"output\"");
  EXPECT_NE(e.find("args.q_out.role"), std::string::npos) << e;
}

TEST_F(MalformedTask, SizeSetMissingASize) {
  std::string e = ErrorAfter("name = \"small\"\nB = 1\n", "name = \"small\"\n");
  EXPECT_NE(e.find("check[0].B: missing"), std::string::npos) << e;
}

TEST_F(MalformedTask, MissingKernelFile) {
  std::string e =
      ErrorAfter("baseline = { cuda = \"baseline.cu\"", "baseline = { cuda = \"nope.cu\"");
  EXPECT_NE(e.find("kernels.baseline.cuda"), std::string::npos) << e;
  EXPECT_NE(e.find("nope.cu"), std::string::npos) << e;
}

TEST_F(MalformedTask, BadFormula) {
  std::string e =
      ErrorAfter("value = \"cos(s * 500000 ** (-2 * i / D))\"", "value = \"cos(s * t)\"");
  EXPECT_NE(e.find("args.cos.init.value"), std::string::npos) << e;
}

TEST(TaskSignature, MismatchNamesKernelFile) {
  Task t = LoadTask(std::string(KF_TASKS) + "/rope_llama3");
  Kernel k = ParseKernel("bad.cl",
                         "// @kernel f\n// @grid 1\n// @block 1\n__kernel void f(__global half* k, "
                         "__global half* q) {}\n");
  try {
    CheckKernelSignature(t, k);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.cl"), std::string::npos) << e.what();
  }
  Kernel suffixed = ParseKernel("ok.cl", R"(// @kernel f
// @grid 1
// @block 1
__kernel void f(__global const half* q, __global const half* k, __global const float* cos_tab, __global const float* sin_tab,
                __global half* q_out, __global half* k_out, int B, int S, int Hq, int Hkv, int D) {})");
  EXPECT_NO_THROW(CheckKernelSignature(t, suffixed));
}

}  // namespace
}  // namespace kf
