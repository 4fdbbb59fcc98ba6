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

}  // namespace
}  // namespace kf
