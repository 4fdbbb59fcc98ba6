#include "core/task.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/input_error.hpp"
#include "core/task_library.hpp"
#include "eval/workspace.hpp"

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

// Every kernel file of every bundled task parses (annotations, parameters, constraints) and
// matches its task's signature, CUDA ones included: a machine without a GPU still catches a
// template whose annotations are broken.
TEST(Task, EveryBundledKernelMatchesTheSignature) {
  setenv("KF_TASKS_DIR", KF_TASKS, 1);
  int checked = 0;
  for (const Task& t : BundledTasks()) {
    std::vector<std::string> files;
    for (const auto& [l, f] : t.reference) files.push_back(f);
    for (const auto& [l, f] : t.baseline) files.push_back(f);
    for (const auto& [l, fs] : t.templates) files.insert(files.end(), fs.begin(), fs.end());
    for (const auto& f : files) {
      Kernel k;
      EXPECT_NO_THROW(k = LoadKernelFile(t.PathOf(f))) << t.name << "/" << f;
      EXPECT_NO_THROW(CheckKernelSignature(t, k)) << t.name << "/" << f;
      ++checked;
    }
  }
  EXPECT_GT(checked, 100) << "the library's kernels were not all found";
}

TEST(Task, FindsBundledTaskByName) {
  setenv("KF_TASKS_DIR", KF_TASKS, 1);
  EXPECT_EQ(FindTask("rope_llama3").name, "rope_llama3");
  EXPECT_THROW(FindTask("no_such_task"), InputError);
  EXPECT_FALSE(BundledTasks().empty());
}

// A task is known by its folder's content: a copy has the same id, any edit of a file it holds
// another, a hidden file none (an editor's swap file does not make another task).
TEST(Task, ItsIdIsTheHashOfItsFolder) {
  Task rope = LoadTask(std::string(KF_TASKS) + "/rope_llama3");
  ASSERT_EQ(rope.id.size(), 33u) << rope.id;
  EXPECT_EQ(rope.id.front(), 't');
  fs::path copy = fs::temp_directory_path() / ("kf_task_id_" + std::to_string(getpid()));
  fs::remove_all(copy);
  fs::copy(rope.dir, copy, fs::copy_options::recursive);
  EXPECT_EQ(LoadTask(copy.string()).id, rope.id);
  std::ofstream(copy / ".notes.swp") << "scratch";
  EXPECT_EQ(LoadTask(copy.string()).id, rope.id);
  std::ofstream(copy / "baseline.cl", std::ios::app) << "\n// edited\n";
  std::string edited = LoadTask(copy.string()).id;
  EXPECT_NE(edited, rope.id);
  std::ofstream(copy / "notes.md") << "a new file";
  EXPECT_NE(LoadTask(copy.string()).id, edited);
  // The text given for task.toml stands for the file.
  std::ifstream toml(copy / "task.toml");
  std::stringstream text;
  text << toml.rdbuf();
  EXPECT_EQ(LoadTaskFromText(copy.string(), text.str()).id, LoadTask(copy.string()).id);
  EXPECT_NE(LoadTaskFromText(copy.string(), text.str() + "\n# a comment\n").id,
            LoadTask(copy.string()).id);
  fs::remove_all(copy);
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
    return ErrorAfterEdits({{from, to}});
  }

  // Each edit replaces the first occurrence of `first` with `second`, in order.
  std::string ErrorAfterEdits(const std::vector<std::pair<std::string, std::string>>& edits) {
    std::string text = original_;
    for (const auto& [from, to] : edits) {
      size_t at = text.find(from);
      EXPECT_NE(at, std::string::npos) << from;
      if (at != std::string::npos) text.replace(at, from.size(), to);
    }
    std::ofstream(dir_ / "task.toml") << text;
    try {
      LoadTask(dir_.string());
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }

  // "task.toml:LINE: " for the line of `needle` in the original file.
  std::string At(const std::string& needle) {
    return "task.toml:" + std::to_string(LineOf(needle)) + ": ";
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

// Issue 14 (3): a misspelled key is an error naming the file, line and key, with a suggestion
// when a known key is close; never silently ignored.
TEST_F(MalformedTask, UnknownKeysAreErrorsWithSuggestions) {
  struct Case {
    std::string from, to, where, suggestion;
  };
  const std::vector<Case> cases = {
      {"op_class = \"rope\"", "op_clas = \"rope\"", At("op_class") + "op_clas: ", "'op_class'"},
      {"init = {", "intit = {", At("init = {") + "args.q.intit: ", "'init'"},
      {"std = 1.0 }", "sdt = 1.0 }", At("std = 1.0 }") + "args.q.init.sdt: ", "'std'"},
      {"max_bad_ratio = 1e-3", "max_bad_ration = 1e-3",
       At("max_bad_ratio") + "tolerance.max_bad_ration: ", "'max_bad_ratio'"},
      {"flops = ", "flop = ", At("flops = ") + "cost.flop: ", "'flops'"},
      {"templates = {", "template = {", At("templates = {") + "kernels.template: ", "'templates'"},
      {"reference = { cuda", "reference = { cdua",
       At("reference = {") + "kernels.reference.cdua: ", "'cuda'"},
      {"device_class = \"gpu\"", "device_clas = \"gpu\"",
       At("device_class = \"gpu\"") + "bench[0].device_clas: ", "'device_class'"},
      {"name = \"small\"\nB = 1", "name = \"small\"\nBB = 1",
       "task.toml:" + std::to_string(LineOf("name = \"small\"") + 1) + ": check[0].BB: ", "'B'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.to);
    std::string e = ErrorAfter(c.from, c.to);
    EXPECT_NE(e.find(c.where + "unknown key"), std::string::npos) << e;
    EXPECT_NE(e.find("did you mean " + c.suggestion + "?"), std::string::npos) << e;
  }
  // Nothing close: no suggestion, but the keys there are.
  std::string e = ErrorAfter("op_class = \"rope\"\n", "op_class = \"rope\"\nowner = \"me\"\n");
  EXPECT_NE(e.find("task.toml:" + std::to_string(LineOf("op_class") + 1) + ": owner: unknown key"),
            std::string::npos)
      << e;
  EXPECT_EQ(e.find("did you mean"), std::string::npos) << e;
  EXPECT_NE(e.find("op_class"), std::string::npos) << e;
}

// Issue 14 (3): an input without a generator would run on zeros; it is an error at load time.
TEST_F(MalformedTask, InputWithoutGeneratorIsAnError) {
  std::string e = ErrorAfter("role = \"in\"\ninit = { dist = \"normal\", mean = 0.0, std = 1.0 }\n",
                             "role = \"in\"\n");
  EXPECT_NE(e.find(At("[[args]]") + "args.q.init: "), std::string::npos) << e;
  e = ErrorAfter("role = \"in\"\ninit = { dist = \"normal\", mean = 0.0, std = 1.0 }\n",
                 "role = \"inout\"\n");
  EXPECT_NE(e.find(At("[[args]]") + "args.q.init: "), std::string::npos) << e;
}

// Keys that belong to another kind of argument are not ignored either.
TEST_F(MalformedTask, KeysOfAnotherKindOfArgument) {
  std::string e = ErrorAfter("role = \"out\"\n", "role = \"out\"\ninit = { dist = \"normal\" }\n");
  EXPECT_NE(e.find("args.q_out.init: "), std::string::npos) << e;
  e = ErrorAfter("name = \"B\"\ntype = \"i32\"\n", "name = \"B\"\ntype = \"i32\"\nrole = \"in\"\n");
  EXPECT_NE(e.find("args.B.role: "), std::string::npos) << e;
  e = ErrorAfter("role = \"out\"\n", "role = \"out\"\nvalue = \"B\"\n");
  EXPECT_NE(e.find("args.q_out.value: "), std::string::npos) << e;
}

// Issue 14 (9): an integer scalar must be an integer (and fit its type) at every size set.
TEST_F(MalformedTask, IntegerScalarThatIsNotAnInteger) {
  std::string e = ErrorAfter("value = \"S\"", "value = \"0.5\"");
  EXPECT_NE(e.find(At("value = \"S\"") + "args.S.value: "), std::string::npos) << e;
  EXPECT_NE(e.find("not an integer"), std::string::npos) << e;
  e = ErrorAfter("value = \"S\"", "value = \"S / 2\"");  // S = 77 in the set 'ragged'
  EXPECT_NE(e.find(At("value = \"S\"") + "args.S.value: "), std::string::npos) << e;
  EXPECT_NE(e.find("'ragged'"), std::string::npos) << e;
  e = ErrorAfter("value = \"S\"", "value = \"S * 2 ** 31\"");
  EXPECT_NE(e.find(At("value = \"S\"") + "args.S.value: "), std::string::npos) << e;
  EXPECT_NE(e.find("i32"), std::string::npos) << e;
}

// Issue 14 (8): OpenCL 1.2 takes no half kernel argument, and the evaluator passes scalars as
// i32, i64, f32 or f64 only; an f16 (or u8) scalar is refused at load time.
TEST_F(MalformedTask, HalfScalarIsRefused) {
  const std::string s_type = "name = \"S\"\ntype = \"i32\"";
  const std::string at = "task.toml:" + std::to_string(LineOf(s_type) + 1) + ": args.S.type: ";
  std::string e = ErrorAfter(s_type, "name = \"S\"\ntype = \"f16\"");
  EXPECT_NE(e.find(at), std::string::npos) << e;
  EXPECT_NE(e.find("OpenCL"), std::string::npos) << e;
  e = ErrorAfter(s_type, "name = \"S\"\ntype = \"u8\"");
  EXPECT_NE(e.find(at), std::string::npos) << e;
}

// Issue 14 (9): settings are per-set values beyond the shape sizes; they are not sizes.
TEST_F(MalformedTask, SettingsAreNotSizes) {
  const std::string sizes = "sizes = [\"B\", \"S\", \"Hq\", \"Hkv\", \"D\"]\n";
  const std::string with_scale = sizes + "settings = { scale = 0.5 }\n";
  std::string e = ErrorAfterEdits(
      {{sizes, with_scale},
       {"shape = [\"B\", \"S\", \"Hq\", \"D\"]", "shape = [\"B\", \"S\", \"Hq\", \"scale\"]"}});
  EXPECT_NE(e.find("args.q.shape: "), std::string::npos) << e;
  EXPECT_NE(e.find("'scale' is a setting"), std::string::npos) << e;
  e = ErrorAfter(sizes, sizes + "settings = { D = 2 }\n");
  EXPECT_NE(e.find("task.toml:" + std::to_string(LineOf("sizes = ") + 1) + ": settings.D: "),
            std::string::npos)
      << e;
  e = ErrorAfterEdits(
      {{sizes, with_scale}, {"name = \"small\"\n", "name = \"small\"\nscale = \"big\"\n"}});
  EXPECT_NE(e.find("check[0].scale: expected a number"), std::string::npos) << e;
  e = ErrorAfterEdits(
      {{sizes, with_scale}, {"name = \"small\"\n", "name = \"small\"\nscal = 0.1\n"}});
  EXPECT_NE(e.find("check[0].scal: unknown key"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'scale'?"), std::string::npos) << e;
  // A setting that is not an integer at one set, read by an i32 scalar.
  e = ErrorAfterEdits({{sizes, with_scale}, {"value = \"S\"", "value = \"S * scale * 2\""}});
  EXPECT_EQ(e, "");
  e = ErrorAfterEdits({{sizes, with_scale},
                       {"name = \"ragged\"\n", "name = \"ragged\"\nscale = 0.25\n"},
                       {"value = \"S\"", "value = \"S * scale * 2\""}});
  // One line down: the settings line comes first.
  EXPECT_NE(e.find("task.toml:" + std::to_string(LineOf("value = \"S\"") + 1) + ": args.S.value: "),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("'ragged'"), std::string::npos) << e;
}

// Issue 14 (9): a setting that differs between check sets reaches the scalar argument the
// evaluator passes (ScalarArg, from the set's environment), floats intact.
TEST(Task, PerSetSettingReachesScalarArgs) {
  Task t = LoadTask(std::string(KF_TEST_DATA) + "/tasks/rmsnorm_eps");
  ASSERT_EQ(t.check_sizes.size(), 2u);
  EXPECT_DOUBLE_EQ(t.check_sizes[0].sizes.at("eps"), 1e-5);  // the default
  EXPECT_DOUBLE_EQ(t.check_sizes[1].sizes.at("eps"), 1e-3);  // the set's own
  EXPECT_DOUBLE_EQ(t.bench_sizes[0].sizes.at("eps"), 1e-5);
  EXPECT_DOUBLE_EQ(t.check_sizes[1].sizes.at("C"), 33);
  const ArgSpec& eps = t.args.back();
  ASSERT_EQ(eps.name, "eps");
  KernelArg small = ScalarArg(eps, SizesEnv(t.check_sizes[0].sizes));
  KernelArg large = ScalarArg(eps, SizesEnv(t.check_sizes[1].sizes));
  EXPECT_EQ(small.kind, KernelArg::Kind::kF32);
  EXPECT_FLOAT_EQ(small.f32, 1e-5f);
  EXPECT_FLOAT_EQ(large.f32, 1e-3f);
  EXPECT_EQ(ScalarArg(t.args[3], SizesEnv(t.check_sizes[1].sizes)).i32, 33);
  Kernel wrong = LoadKernelFile(t.PathOf("hardcoded_eps.cl"));
  EXPECT_NO_THROW(CheckKernelSignature(t, wrong));
}

// A tolerance may grow with the size set: atol and rtol are expressions over sizes and settings,
// checked at load time like cost formulas.
TEST_F(MalformedTask, ToleranceIsAnExpressionOverSizes) {
  EXPECT_EQ(ErrorAfter("atol = 1e-3", "atol = \"1e-6 * sqrt(S * D)\""), "");
  std::string text = original_;
  text.replace(text.find("atol = 1e-3"), 11, "atol = \"1e-6 * sqrt(S * D)\"");
  Task t = LoadTaskFromText(dir_.string(), text);
  Tolerance small = t.tolerance.At(t.check_sizes[0].sizes);   // S = 16, D = 128
  Tolerance record = t.tolerance.At(t.bench_sizes[0].sizes);  // S = 4096, D = 128
  EXPECT_DOUBLE_EQ(small.atol, 1e-6 * std::sqrt(16.0 * 128));
  EXPECT_DOUBLE_EQ(record.atol, 1e-6 * std::sqrt(4096.0 * 128));
  EXPECT_DOUBLE_EQ(record.rtol, 1e-2);
  std::string e = ErrorAfter("atol = 1e-3", "atol = \"1e-3 * (S - 20)\"");
  EXPECT_NE(e.find(At("atol = 1e-3") + "tolerance.atol: at size set 'small'"), std::string::npos)
      << e;
  e = ErrorAfter("rtol = 1e-2", "rtol = \"N * 1e-3\"");
  EXPECT_NE(e.find(At("rtol = 1e-2") + "tolerance.rtol: "), std::string::npos) << e;
  EXPECT_NE(e.find("'N'"), std::string::npos) << e;
}

// A CSR matrix from its two generators: checked at load time, generated once per set.
TEST(Task, CsrGeneratorsMakeOneValidMatrix) {
  const std::string dir = std::string(KF_TASKS) + "/rope_llama3";  // only for its kernel files
  auto text = [](const std::string& row_ptr_init, const std::string& col_shape) {
    return R"(name = "csr"
op_class = "spmv"
sizes = ["R", "C", "NNZ"]
[[args]]
name = "row_ptr"
type = "i32"
shape = ["R + 1"]
role = "in"
init = )" + row_ptr_init +
           R"(
[[args]]
name = "col_idx"
type = "i32"
shape = [")" +
           col_shape + R"("]
role = "in"
init = { dist = "csr_col_idx", rows = "R", cols = "C", nnz = "NNZ", seed = 3, skew = 1.0 }
[[args]]
name = "y"
type = "f32"
shape = ["R"]
role = "out"
[[check]]
name = "small"
R = 37
C = 53
NNZ = 400
[[bench]]
name = "b"
R = 100
C = 100
NNZ = 1000
[cost]
min_bytes = "4 * NNZ"
[kernels]
reference = { opencl = "reference.cl" }
baseline = { opencl = "baseline.cl" }
)";
  };
  const std::string good =
      R"({ dist = "csr_row_ptr", rows = "R", cols = "C", nnz = "NNZ", seed = 3, skew = 1.0 })";
  Task t = LoadTaskFromText(dir, text(good, "NNZ"));
  Env env = SizesEnv(t.check_sizes[0].sizes);
  HostBuffer row_ptr = GenerateInput(t.args[0], env, 1);
  HostBuffer col_idx = GenerateInput(t.args[1], env, 2);  // the check seed does not matter
  ASSERT_EQ(row_ptr.count, 38u);
  ASSERT_EQ(col_idx.count, 400u);
  EXPECT_EQ(LoadElement(row_ptr.bytes.data(), DType::kI32, 0), 0);
  EXPECT_EQ(LoadElement(row_ptr.bytes.data(), DType::kI32, 37), 400);
  for (size_t r = 0; r < 37; ++r) {
    auto begin = static_cast<size_t>(LoadElement(row_ptr.bytes.data(), DType::kI32, r));
    auto end = static_cast<size_t>(LoadElement(row_ptr.bytes.data(), DType::kI32, r + 1));
    for (size_t k = begin + 1; k < end; ++k) {
      EXPECT_LT(LoadElement(col_idx.bytes.data(), DType::kI32, k - 1),
                LoadElement(col_idx.bytes.data(), DType::kI32, k));
    }
  }
  HostBuffer again = GenerateInput(t.args[1], env, 99);
  EXPECT_EQ(again.bytes, col_idx.bytes);

  auto error = [&](const std::string& row_ptr_init, const std::string& col_shape) {
    try {
      LoadTaskFromText(dir, text(row_ptr_init, col_shape));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::string e = error(good, "NNZ + 1");
  EXPECT_NE(e.find("task.toml:13: args.col_idx.shape: at size set 'small': 401 elements"),
            std::string::npos)
      << e;
  e = error(
      R"({ dist = "csr_row_ptr", rows = "R", cols = "C", nnz = "NNZ", seed = 4, skew = 1.0 })",
      "NNZ");
  EXPECT_NE(e.find("task.toml:9: args.row_ptr.init: no argument with dist = \"csr_col_idx\""),
            std::string::npos)
      << e;
  e = error(R"({ dist = "csr_row_ptr", rows = "R", cols = "C", nnz = "R * C + 1", seed = 3 })",
            "NNZ");
  EXPECT_NE(e.find("args.row_ptr.init.nnz: at size set 'small': 1962 nonzeros do not fit"),
            std::string::npos)
      << e;
  e = error(R"({ dist = "csr_row_ptr", rows = "R", cols = "C", nnz = "NNZ", sed = 3 })", "NNZ");
  EXPECT_NE(e.find("unknown key 'sed'; did you mean 'seed'?"), std::string::npos) << e;
}

// Defects that used to pass the loader and failed (or misbehaved) later.
TEST_F(MalformedTask, ValuesCheckedAtLoadTime) {
  std::string e = ErrorAfter("name = \"record\"\ndevice_class = \"gpu\"\nB = 8\n",
                             "name = \"record\"\ndevice_class = \"gpu\"\nB = 8000000000000\n");
  EXPECT_NE(e.find("args.q.shape: "), std::string::npos) << e;
  EXPECT_NE(e.find("too large"), std::string::npos) << e;
  e = ErrorAfter("min_bytes = \"2 * 2 * B", "min_bytes = \"S / (B - 1) + 2 * 2 * B");
  EXPECT_NE(e.find(At("min_bytes = ") + "cost.min_bytes: "), std::string::npos) << e;
  EXPECT_NE(e.find("'small'"), std::string::npos) << e;
  e = ErrorAfter("atol = 1e-3", "atol = nan");
  EXPECT_NE(e.find(At("atol = 1e-3") + "tolerance.atol: "), std::string::npos) << e;
  e = ErrorAfter("max_bad_ratio = 1e-3", "max_bad_ratio = 2");
  EXPECT_NE(e.find("tolerance.max_bad_ratio: "), std::string::npos) << e;
  e = ErrorAfter("std = 1.0 }", "std = inf }");
  EXPECT_NE(e.find("args.q.init.std: "), std::string::npos) << e;
  e = ErrorAfter("device_class = \"gpu\"", "device_class = \"gpus\"");
  EXPECT_NE(e.find(At("device_class = \"gpu\"") + "bench[0].device_class: "), std::string::npos)
      << e;
  EXPECT_NE(e.find("did you mean 'gpu'?"), std::string::npos) << e;
  e = ErrorAfter("name = \"ragged\"", "name = \"small\"");
  EXPECT_NE(e.find(At("name = \"ragged\"") + "check[1].name: "), std::string::npos) << e;
  e = ErrorAfter("sizes = [\"B\"", "sizes = [\"B B\"");
  EXPECT_NE(e.find(At("sizes = ") + "sizes: "), std::string::npos) << e;
}

// A kernel file must be a readable file name: a folder is not one, and a name too long for the
// file system is an InputError, not a std::filesystem_error.
TEST_F(MalformedTask, KernelFileThatIsNotAFile) {
  std::string e = ErrorAfter("baseline = { cuda = \"baseline.cu\"", "baseline = { cuda = \".\"");
  EXPECT_NE(e.find(At("baseline = {") + "kernels.baseline.cuda: "), std::string::npos) << e;
  e = ErrorAfter("baseline = { cuda = \"baseline.cu\"",
                 "baseline = { cuda = \"" + std::string(300, 'x') + ".cu\"");
  EXPECT_NE(e.find(At("baseline = {") + "kernels.baseline.cuda: "), std::string::npos) << e;
}

// A PyTorch reference (`reference = { torch = "model.py" }`): loaded with or without kernels
// beside it, the baseline then optional; a missing file, a file that is not Python, a torch key
// on the baseline and a misspelled key each name the file, the line and the field.
TEST_F(MalformedTask, TorchReference) {
  std::ofstream(dir_ / "model.py") << "class Model: pass\n";
  const std::string kernel_refs =
      "reference = { cuda = \"reference.cu\", opencl = \"reference.cl\" }";
  std::string torch_only = "reference = { torch = \"model.py\" }";
  EXPECT_EQ(ErrorAfter(kernel_refs, torch_only), "");
  Task t = LoadTask(dir_.string());
  EXPECT_EQ(t.torch_reference, "model.py");
  EXPECT_TRUE(t.reference.empty());
  // A language is one with a reference kernel and a baseline: kernels are not yet checked against
  // the torch module (docs/pytorch.md, "Not yet").
  EXPECT_TRUE(t.Languages().empty());
  EXPECT_EQ(t.baseline.size(), 2u);

  // Without a baseline: it loads, and names no language to run kernels in yet.
  std::string e =
      ErrorAfterEdits({{kernel_refs, torch_only},
                       {"baseline = { cuda = \"baseline.cu\", opencl = \"baseline.cl\" }", ""}});
  EXPECT_EQ(e, "");
  t = LoadTask(dir_.string());
  EXPECT_TRUE(t.Languages().empty());
  EXPECT_TRUE(t.baseline.empty());

  // Beside kernel references.
  EXPECT_EQ(ErrorAfter("reference = { cuda", "reference = { torch = \"model.py\", cuda"), "");
  EXPECT_EQ(LoadTask(dir_.string()).reference.size(), 2u);

  e = ErrorAfter(kernel_refs, "reference = { torch = \"nope.py\" }");
  EXPECT_NE(e.find(At("reference = {") + "kernels.reference.torch: file 'nope.py' does not exist"),
            std::string::npos)
      << e;
  e = ErrorAfter(kernel_refs, "reference = { torch = \"reference.cu\" }");
  EXPECT_NE(e.find(At("reference = {") + "kernels.reference.torch: 'reference.cu' is not a Python"),
            std::string::npos)
      << e;
  e = ErrorAfter(kernel_refs, "reference = { troch = \"model.py\" }");
  EXPECT_NE(e.find("kernels.reference.troch: unknown key 'troch'; did you mean 'torch'?"),
            std::string::npos)
      << e;
  e = ErrorAfter("baseline = { cuda", "baseline = { torch = \"model.py\", cuda");
  EXPECT_NE(e.find(At("baseline = {") + "kernels.baseline.torch: unknown key"), std::string::npos)
      << e;
  e = ErrorAfter(kernel_refs, "reference = { }");
  EXPECT_NE(e.find(At("reference = {") + "kernels.reference: empty"), std::string::npos) << e;
  // Without a torch reference the baseline stays required.
  e = ErrorAfter("baseline = { cuda = \"baseline.cu\", opencl = \"baseline.cl\" }", "");
  EXPECT_NE(e.find("kernels.baseline: missing"), std::string::npos) << e;
}

// randint: an integer input whose bounds are expressions over sizes and settings, checked at every
// size set (integers, 0 <= low < high) and on an integer type only.
TEST_F(MalformedTask, RandIntBoundsAreCheckedAtEverySet) {
  const std::string q =
      "type = \"f16\"\nshape = [\"B\", \"S\", \"Hq\", \"D\"]\nrole = \"in\"\n"
      "init = { dist = \"normal\", mean = 0.0, std = 1.0 }";
  auto with = [&](const std::string& type, const std::string& init) {
    return ErrorAfter(
        q, "type = \"" + type +
               "\"\nshape = [\"B\", \"S\", \"Hq\", \"D\"]\nrole = \"in\"\ninit = " + init);
  };
  EXPECT_EQ(with("i32", "{ dist = \"randint\", low = 1, high = \"D\" }"), "");
  Task t = LoadTask(dir_.string());
  EXPECT_EQ(t.args[0].init.kind, InitSpec::Kind::kRandInt);
  EXPECT_EQ(t.args[0].init.BoundsAt(SizesEnv(t.check_sizes[0].sizes)).second,
            t.check_sizes[0].sizes.at("D"));
  EXPECT_EQ(with("i64", "{ dist = \"randint\", high = \"D // 2\" }"), "");  // low defaults to 0
  std::string e = with("f32", "{ dist = \"randint\", high = \"D\" }");
  EXPECT_NE(e.find("args.q.type: a randint input is an integer type"), std::string::npos) << e;
  e = with("i32", "{ dist = \"randint\", low = 0 }");
  EXPECT_NE(e.find("args.q.init.high: missing"), std::string::npos) << e;
  e = with("i32", "{ dist = \"randint\", high = \"D / 3\" }");
  EXPECT_NE(e.find("args.q.init.high: at size set"), std::string::npos) << e;
  EXPECT_NE(e.find("not integers"), std::string::npos) << e;
  e = with("i32", "{ dist = \"randint\", low = \"D\", high = \"D\" }");
  EXPECT_NE(e.find("is not above low"), std::string::npos) << e;
  e = with("i32", "{ dist = \"randint\", low = -1, high = 4 }");
  EXPECT_NE(e.find("args.q.init.low: at size set"), std::string::npos) << e;
  e = with("u8", "{ dist = \"randint\", high = \"D * 4\" }");
  EXPECT_NE(e.find("above 255"), std::string::npos) << e;
  e = with("i32", "{ dist = \"randint\", high = \"nope\" }");
  EXPECT_NE(e.find("args.q.init.high: 'nope' names 'nope'"), std::string::npos) << e;
  e = with("i32", "{ dist = \"randint\", high = 4, std = 1 }");
  EXPECT_NE(e.find("args.q.init.std: unknown key"), std::string::npos) << e;
}

// Found by reasoning about the fuzzer's reach: the expression parser recurses once per nesting
// level, so a deep expression in task.toml overflowed the stack. Expressions are bounded.
TEST_F(MalformedTask, DeepExpressionIsAnInputError) {
  std::string deep = std::string(30000, '(') + "S" + std::string(30000, ')');
  std::string e = ErrorAfter("value = \"S\"", "value = \"" + deep + "\"");
  EXPECT_NE(e.find(At("value = \"S\"") + "args.S.value: longer than"), std::string::npos)
      << e.substr(0, 200);
}

// The fuzzer's entry point: the same task from text as from the folder, the same errors.
TEST(Task, LoadsFromText) {
  const std::string dir = std::string(KF_TASKS) + "/rope_llama3";
  std::ifstream in(dir + "/task.toml");
  std::stringstream text;
  text << in.rdbuf();
  Task t = LoadTaskFromText(dir, text.str());
  EXPECT_EQ(t.name, "rope_llama3");
  EXPECT_EQ(t.args.size(), LoadTask(dir).args.size());
  try {
    LoadTaskFromText(dir, "name = \"x\"\nop_class = \"rope");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rope_llama3/task.toml:2: syntax"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(LoadTaskFromText(dir, "name = \"x\"\nop_class = \"rope\"\nbogus = 1\n"), InputError);
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
