#include "core/kernel.hpp"

#include <gtest/gtest.h>

#include "core/input_error.hpp"

namespace kf {
namespace {

const char* kGood = R"(// A template.
// @kernel scale
// @grid ceil_div(N, BLOCK * VEC)
// @block BLOCK
// @param BLOCK in [64, 128, 256] default 128
// @param VEC in range(1, 5)
// @constraint BLOCK * VEC <= max_work_group_size
__kernel void scale(__global const float* restrict x, __global float* y, int N) { }
)";

std::string ErrorOf(const std::string& path, const std::string& source) {
  try {
    ParseKernel(path, source);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Kernel, ParsesAnnotations) {
  Kernel k = ParseKernel("scale.cl", kGood);
  EXPECT_EQ(k.language, Language::kOpenCL);
  EXPECT_EQ(k.entry, "scale");
  ASSERT_EQ(k.grid.size(), 1u);
  ASSERT_EQ(k.params.size(), 2u);
  EXPECT_EQ(k.params[0].values, (std::vector<std::string>{"64", "128", "256"}));
  EXPECT_EQ(k.params[0].default_value, "128");
  EXPECT_EQ(k.params[1].values, (std::vector<std::string>{"1", "2", "3", "4"}));
  EXPECT_EQ(k.params[1].default_value, "1");
  EXPECT_EQ(k.constraints.size(), 1u);
  EXPECT_EQ(k.arg_names, (std::vector<std::string>{"x", "y", "N"}));

  Config c = k.ResolveConfig({{"VEC", "4"}});
  EXPECT_EQ(c.at("BLOCK"), "128");
  EXPECT_EQ(c.at("VEC"), "4");
  Env env;
  env.Set("N", 1000);
  BindConfig(c, env);
  EXPECT_EQ(k.grid[0].EvalInt(env), 2);
}

TEST(Kernel, CudaEntryArgsAndLanguage) {
  Kernel k = ParseKernel("a.cu", R"(// @kernel f
// @grid 1
// @block 32
template <int N> __device__ int helper(int x) { return x; }
extern "C" __global__ void __launch_bounds__(32) f(const __half* __restrict__ q, float* out, int n) {}
)");
  EXPECT_EQ(k.language, Language::kCuda);
  EXPECT_EQ(k.arg_names, (std::vector<std::string>{"q", "out", "n"}));
}

TEST(Kernel, MalformedAnnotationsNameFileLineAndField) {
  EXPECT_NE(ErrorOf("k.cl", "// @grid 1\n// @block 1\n").find("k.cl: @kernel:"), std::string::npos);
  std::string e = ErrorOf("k.cl", "// @kernel f\n// @grid 1 +\n// @block 1\n");
  EXPECT_NE(e.find("k.cl:2: @grid:"), std::string::npos) << e;
  e = ErrorOf("k.cl", "// @kernel f\n// @grid 1\n// @block 1\n// @param B in [1, 2] default 3\n");
  EXPECT_NE(e.find("k.cl:4: @param:"), std::string::npos) << e;
  EXPECT_NE(e.find("default 3"), std::string::npos) << e;
  e = ErrorOf("k.cl", "// @kernel f\n// @grid 1\n// @block 1\n// @param B of [1, 2]\n");
  EXPECT_NE(e.find("k.cl:4: @param:"), std::string::npos) << e;
  e = ErrorOf("k.cl", "// @kernel f\n// @grid 1\n// @block 1\n// @tile 4\n");
  EXPECT_NE(e.find("k.cl:4: @tile: unknown annotation"), std::string::npos) << e;
  e = ErrorOf("k.cl", "// @kernel f\n// @grid 1, 1\n// @block 1\n");
  EXPECT_NE(e.find("same number of dimensions"), std::string::npos) << e;
  e = ErrorOf("k.txt", "// @kernel f\n");
  EXPECT_NE(e.find("k.txt: file name:"), std::string::npos) << e;
  e = ErrorOf("k.cl", "// @kernel f\n// @grid 1\n// @block 1\n// @param B in range(4, 2)\n");
  EXPECT_NE(e.find("k.cl:4:"), std::string::npos) << e;
}

std::string NamesErrorOf(const std::string& source) {
  try {
    CheckKernelNames(ParseKernel("k.cl", source), {"T", "H"}, {"max_work_group_size"});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Kernel, AnUnknownNameInALaunchRuleOrConstraintNamesTheAnnotationsLine) {
  const std::string head = "// @kernel f\n// @param BLOCK in [64, 128]\n";
  const std::string tail = "__kernel void f(int T) {}\n";
  EXPECT_EQ(NamesErrorOf(head + "// @grid ceil_div(T * H, BLOCK)\n// @block BLOCK\n" +
                         "// @constraint BLOCK <= max_work_group_size\n" + tail),
            "");
  std::string e = NamesErrorOf(head + "// @grid ceil_div(T * HH, BLOCK)\n// @block BLOCK\n" + tail);
  EXPECT_NE(e.find("k.cl:3: @grid: unknown name 'HH' at column 14 of 'ceil_div(T * HH, BLOCK)'"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("T, H, BLOCK"), std::string::npos) << "the names known: " << e;
  // Device properties are for constraints alone.
  e = NamesErrorOf(head + "// @grid T\n// @block min(BLOCK, max_work_group_size)\n" + tail);
  EXPECT_NE(e.find("k.cl:4: @block: unknown name 'max_work_group_size'"), std::string::npos) << e;
  e = NamesErrorOf(head + "// @grid T\n// @block BLOCK\n// @constraint BLOCK <= T\n" +
                   "// @constraint BLOCK * VEC <= max_work_group_size\n" + tail);
  EXPECT_NE(e.find("k.cl:6: @constraint: unknown name 'VEC'"), std::string::npos) << e;
}

std::string EntryErrorOf(const std::string& entry, const std::vector<std::string>& args) {
  const std::string source = "// @kernel " + entry +
                             "\n// @grid 1\n// @block 1\n\n"
                             "__kernel void scale(__global const float* x,\n"
                             "                    __global float* y, int M) {}\n";
  try {
    CheckEntryArgs(ParseKernel("k.cl", source), args, "task 't'");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Kernel, AWrongEntryPointOrSignatureNamesTheLine) {
  EXPECT_EQ(EntryErrorOf("scale", {"x", "y", "M"}), "");
  // No such definition: the @kernel line. A wrong count: the definition's line. A wrong name:
  // the line of that argument.
  EXPECT_EQ(EntryErrorOf("scael", {"x", "y", "M"}),
            "k.cl:1: entry point scael: no kernel definition named 'scael' was found");
  EXPECT_EQ(EntryErrorOf("scale", {"x", "y"}),
            "k.cl:5: entry point scale: takes 3 arguments; task 't' passes 2");
  EXPECT_EQ(EntryErrorOf("scale", {"x", "y", "N"}),
            "k.cl:6: entry point scale: argument 3 is 'M'; the task passes 'N' there");
  EXPECT_EQ(EntryErrorOf("scale", {"x", "y_out", "M"}),
            "k.cl:6: entry point scale: argument 2 is 'y'; the task passes 'y_out' there");
}

TEST(Kernel, ResolveConfigRejectsUnknownAndUndeclaredValues) {
  Kernel k = ParseKernel("scale.cl", kGood);
  EXPECT_THROW(k.ResolveConfig({{"TILE", "4"}}), InputError);
  EXPECT_THROW(k.ResolveConfig({{"BLOCK", "100"}}), InputError);
}

TEST(Kernel, AnnotationMustStartTheComment) {
  // An '@' later in a comment is prose, not an annotation.
  Kernel k = ParseKernel(
      "x.cl",
      "// @kernel f\n// @grid 1\n// @block 1\n// mail me@kernel.org\n__kernel void f() {}\n");
  EXPECT_EQ(k.entry, "f");
}

TEST(Kernel, ParamRangesAtTheEdgesOf64BitsNeitherOverflowNorHang) {
  // Found by the parsers' fuzzer (tests/data/fuzz_repro): the span and the last step overflowed.
  std::string dir = std::string(KF_TEST_DATA) + "/fuzz_repro/";
  Kernel wide = LoadKernelFile(dir + "param_range_span_overflow.cl");
  ASSERT_EQ(wide.params.size(), 1u);
  EXPECT_EQ(wide.params[0].values, (std::vector<std::string>{"-9223372036854775807", "0"}));
  Kernel k = LoadKernelFile(dir + "param_range_step_overflow.cl");
  ASSERT_EQ(k.params.size(), 1u);
  EXPECT_EQ(k.params[0].values, std::vector<std::string>{"9223372036854775806"});
}

}  // namespace
}  // namespace kf
