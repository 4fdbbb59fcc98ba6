#include "search/classifier.hpp"

#include <gtest/gtest.h>

#include "backend/cuda/cuda_api.hpp"
#include "search/macro_expand.hpp"

namespace kf {
namespace {

const DescriptorSpace& Space() {
  static DescriptorSpace s = DescriptorSpace::Load(std::string(KF_DESCRIPTORS));
  return s;
}

std::vector<int> OpenCL(const std::string& body) {
  return Space().Classify(
      Language::kOpenCL,
      "__kernel void k(__global float* x, __global float4* y) {\n" + body + "\n}", "");
}

TEST(Classifier, TheDefaultSpaceIsFourByFourByFour) {
  ASSERT_EQ(Space().dimensions().size(), 3u);
  for (const Dimension& d : Space().dimensions()) EXPECT_EQ(d.levels.size(), 4u) << d.name;
  EXPECT_EQ(Space().dimensions()[0].name, "memory");
}

TEST(Classifier, OpenCLMemoryLevels) {
  EXPECT_EQ(OpenCL("x[get_global_id(0)] = 1.0f;")[0], 0);
  EXPECT_EQ(OpenCL("vstore4(vload4(0, x), 1, x);")[0], 1);
  EXPECT_EQ(OpenCL("vstore_half8(vload8(0, x), 0, (__global half*)x);")[0], 1);
  EXPECT_EQ(OpenCL("__local float t[64]; t[get_local_id(0)] = x[0]; x[1] = t[0];")[0], 2);
  EXPECT_EQ(OpenCL("__local float t[64]; event_t e = async_work_group_copy(t, x, 64, 0); "
                   "wait_group_events(1, &e);")[0],
            3);
  EXPECT_EQ(OpenCL("prefetch(x, 64); x[0] = 1;")[0], 3);
}

TEST(Classifier, OpenCLAlgorithmLevels) {
  EXPECT_EQ(OpenCL("x[0] = 1;")[1], 0);
  EXPECT_EQ(OpenCL("for (int i = 0; i < 4; ++i) x[i] = 1;")[1], 1);
  EXPECT_EQ(OpenCL("int i = 0; while (i < 4) x[i++] = 1;")[1], 1);
  EXPECT_EQ(OpenCL("#pragma unroll\nfor (int i = 0; i < 4; ++i) x[i] = 1;")[1], 2);
}

TEST(Classifier, OpenCLCoordinationLevels) {
  EXPECT_EQ(OpenCL("x[0] = 1;")[2], 0);
  EXPECT_EQ(OpenCL("barrier(CLK_LOCAL_MEM_FENCE);")[2], 1);
  EXPECT_EQ(OpenCL("x[0] = sub_group_reduce_add(x[1]);")[2], 2);
  EXPECT_EQ(OpenCL("atomic_add((__global int*)x, 1);")[2], 3);
  EXPECT_EQ(OpenCL("atom_inc((__global int*)x);")[2], 3);
}

TEST(Classifier, CommentsAndNamesAreNotFeatures) {
  // Words in comments, and identifiers that merely contain a keyword, decide nothing.
  EXPECT_EQ(
      OpenCL("// uses __local memory, barrier(), vload4 and atomic_add\n/* for (;;) */ x[0] = 1;"),
      (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(OpenCL("float before = x[0]; float barrier_count = 2; x[1] = before + barrier_count;"),
            (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(StripComments("a // b\nc /* d */ e \"// f\""), "a \nc   e \"// f\"");
}

TEST(Classifier, AVectorLoadBuiltThroughAMacroIsClassifiedLikeTheLiteralOne) {
  // The natural way to tune the vector width: the name pasted from a parameter.
  std::string src =
      "#define CAT_(a, b) a##b\n#define CAT(a, b) CAT_(a, b)\n#define VLOAD CAT(vload_half, VEC)\n"
      "__kernel void k(__global const half* x, __global float* y) {\n"
      "  float8 v = VLOAD(0, x); y[0] = v.s0;\n}\n";
  std::string literal =
      "__kernel void k(__global const half* x, __global float* y) {\n"
      "  float8 v = vload_half8(0, x); y[0] = v.s0;\n}\n";
  std::vector<int> expected = Space().Classify(Language::kOpenCL, literal, "");
  ASSERT_EQ(expected[0], 1);
  EXPECT_EQ(Space().Classify(Language::kOpenCL, src, "", {{"VEC", "8"}}), expected);
  // Without the value the name is no builtin (the compiler would refuse it): not a vector load.
  EXPECT_EQ(Space().Classify(Language::kOpenCL, src, "")[0], 0);
}

TEST(MacroExpand, SubstitutesPastesStringifiesAndNeverLoops) {
  EXPECT_EQ(ExpandMacros("#define W 4\nfloat a[W];", {}), "\nfloat a[4];\n");
  EXPECT_EQ(ExpandMacros("#define P(a, b) a##b\nP(x, 2) P(vload, W)", {{"W", "8"}}),
            "\nx2 vloadW\n")
      << "a pasted argument is not expanded first";
  EXPECT_EQ(ExpandMacros("#define S(a) #a\nS(hello world)", {}), "\n\"hello world\"\n");
  EXPECT_EQ(ExpandMacros("#define A B\n#define B A\nA", {}), "\n\nA\n") << "no recursion";
  EXPECT_EQ(ExpandMacros("#define F(x) (x + 1)\nF F(F(1))", {}), "\nF ((1 + 1) + 1)\n");
  // A -D value wins over the source's own default, as with #ifndef VEC / #define VEC 4.
  EXPECT_EQ(ExpandMacros("#ifndef VEC\n#define VEC 4\n#endif\nVEC", {{"VEC", "16"}}),
            "#ifndef VEC\n\n#endif\n16\n");
  EXPECT_EQ(ExpandMacros("#define LONG(a) \\\n  (a * 2)\nLONG(3)", {}), "\n(3 * 2)\n");
  EXPECT_EQ(ExpandMacros("#define G(a) a\nG(unclosed", {}), "\nG(unclosed\n");
}

class CudaClassifier : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    nvrtc_ = cuda::Nvrtc::Load(&error);
    if (!nvrtc_) GTEST_SKIP() << "NVRTC not available here: " << error;
  }
  std::vector<int> Classify(const std::string& body) {
    std::string src =
        "#include <cuda_pipeline.h>\nextern \"C\" __global__ void k(const float4* a, float* x, int "
        "n) {\n" +
        body + "\n}";
    cuda::NvrtcOutput out = cuda::CompileCuda(*nvrtc_, src, {"k"}, {}, 90);
    EXPECT_TRUE(out.ok) << out.log;
    EXPECT_FALSE(out.ptx.empty());
    return Space().Classify(Language::kCuda, src, out.ptx);
  }
  std::unique_ptr<cuda::Nvrtc> nvrtc_;
};

TEST_F(CudaClassifier, ReadsThePtx) {
  EXPECT_EQ(Classify("x[threadIdx.x] = a[0].x;"), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(Classify("float4 v = a[threadIdx.x]; x[threadIdx.x] = v.x + v.w;")[0], 1);
  EXPECT_EQ(Classify("__shared__ float s[128]; s[threadIdx.x] = a[0].x; __syncthreads(); x[0] = "
                     "s[threadIdx.x ^ 1];"),
            (std::vector<int>{2, 0, 1}));
  EXPECT_EQ(Classify("__shared__ float s[128]; __pipeline_memcpy_async(&s[threadIdx.x], "
                     "&a[threadIdx.x].x, 4); "
                     "__pipeline_commit(); __pipeline_wait_prior(0); x[0] = s[0];")[0],
            3);
  EXPECT_EQ(Classify("float v = a[0].x; v += __shfl_down_sync(0xffffffff, v, 1); x[0] = v;")[2], 2);
  EXPECT_EQ(Classify("atomicAdd(x, a[0].x);")[2], 3);
  EXPECT_EQ(Classify("for (int j = threadIdx.x; j < n; j += blockDim.x) x[j] = a[j].y;")[1], 1);
  EXPECT_EQ(Classify("#pragma unroll\nfor (int j = 0; j < 4; ++j) x[j * n] = a[j].y;")[1], 2);
}

}  // namespace
}  // namespace kf
