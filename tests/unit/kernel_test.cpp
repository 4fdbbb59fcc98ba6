#include "core/kernel.hpp"

#include <gtest/gtest.h>

#include "core/input_error.hpp"
#include "core/task.hpp"
#include "eval/precheck.hpp"
#include "eval/workspace.hpp"

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
  EXPECT_EQ(k.launches.at(0).entry, "scale");
  ASSERT_EQ(k.launches.at(0).grid.size(), 1u);
  ASSERT_EQ(k.params.size(), 2u);
  EXPECT_EQ(k.params[0].values, (std::vector<std::string>{"64", "128", "256"}));
  EXPECT_EQ(k.params[0].default_value, "128");
  EXPECT_EQ(k.params[1].values, (std::vector<std::string>{"1", "2", "3", "4"}));
  EXPECT_EQ(k.params[1].default_value, "1");
  EXPECT_EQ(k.constraints.size(), 1u);
  EXPECT_EQ(k.launches.at(0).arg_names, (std::vector<std::string>{"x", "y", "N"}));

  Config c = k.ResolveConfig({{"VEC", "4"}});
  EXPECT_EQ(c.at("BLOCK"), "128");
  EXPECT_EQ(c.at("VEC"), "4");
  Env env;
  env.Set("N", 1000);
  BindConfig(c, env);
  EXPECT_EQ(k.launches.at(0).grid[0].EvalInt(env), 2);
}

TEST(Kernel, CudaEntryArgsAndLanguage) {
  Kernel k = ParseKernel("a.cu", R"(// @kernel f
// @grid 1
// @block 32
template <int N> __device__ int helper(int x) { return x; }
extern "C" __global__ void __launch_bounds__(32) f(const __half* __restrict__ q, float* out, int n) {}
)");
  EXPECT_EQ(k.language, Language::kCuda);
  EXPECT_EQ(k.launches.at(0).arg_names, (std::vector<std::string>{"q", "out", "n"}));
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

const char* kTwoLaunches = R"(// A two-pass scan.
// @param BLOCK in [64, 128] default 64
// @scratch totals f32 R * ceil_div(C, BLOCK)
// @scratch flags i32 R

// @kernel scan_chunks
// @grid ceil_div(C, BLOCK), R
// @block BLOCK, 1
__kernel void scan_chunks(__global const float* x, __global float* y, int R, int C,
                          __global float* totals, __global int* flags) {}

// @kernel add_offsets
// @grid ceil_div(C, 256)
// @block 256
__kernel void add_offsets(__global const float* x, __global float* y, int R, int C,
                          __global float* totals, __global int* flags) {}
)";

// Several @kernel blocks are launched in file order, each with its own launch rule; @scratch
// buffers follow the task's arguments in every entry point's signature.
TEST(Kernel, SeveralKernelBlocksAreLaunchedInFileOrderWithTheirOwnRules) {
  Kernel k = ParseKernel("scan.cl", kTwoLaunches);
  ASSERT_EQ(k.launches.size(), 2u);
  EXPECT_EQ(k.launches[0].entry, "scan_chunks");
  EXPECT_EQ(k.launches[1].entry, "add_offsets");
  EXPECT_EQ(k.EntryNames(), "scan_chunks,add_offsets");
  EXPECT_EQ(k.launches[0].entry_line, 6);
  EXPECT_EQ(k.launches[1].grid_line, 13);
  Env env;
  env.Set("R", 3);
  env.Set("C", 333);
  const Config config = k.ResolveConfig({});
  Launch first = MakeLaunch(k.launches[0], config, env);
  Launch second = MakeLaunch(k.launches[1], config, env);
  EXPECT_EQ(first.grid, (std::vector<int64_t>{6, 3}));
  EXPECT_EQ(first.block, (std::vector<int64_t>{64, 1}));
  EXPECT_EQ(second.grid, (std::vector<int64_t>{2}));
  EXPECT_EQ(second.block, (std::vector<int64_t>{256}));
  ASSERT_EQ(k.scratch.size(), 2u);
  EXPECT_EQ(k.scratch[0].name, "totals");
  EXPECT_EQ(k.scratch[0].dtype, DType::kF32);
  EXPECT_EQ(k.scratch[1].dtype, DType::kI32);
  EXPECT_EQ(k.scratch[0].line, 3);
  EXPECT_EQ(ScratchCounts(k, k.ResolveConfig({{"BLOCK", "128"}}), env),
            (std::vector<int64_t>{9, 3}));
  // One compile request names every entry point.
  EXPECT_EQ(CompileRequestFor(k, config, {}).entries,
            (std::vector<std::string>{"scan_chunks", "add_offsets"}));
  // A task's defines (a variant's macros) come first, then the configuration.
  CompileRequest with_task = CompileRequestFor(k, {{"BLOCK", "128"}}, {{"KF_BF16", "1"}});
  EXPECT_EQ(with_task.defines,
            (std::vector<std::pair<std::string, std::string>>{{"KF_BF16", "1"}, {"BLOCK", "128"}}));
  // Both entry points take the task's arguments, then the scratch buffers.
  EXPECT_NO_THROW(CheckEntryArgs(k, {"x", "y", "R", "C"}, "task 't'"));
  EXPECT_NO_THROW(CheckKernelNames(k, {"R", "C"}, {}));
  std::string e;
  try {
    CheckEntryArgs(k, {"x", "y", "R"}, "task 't'");
  } catch (const InputError& error) {
    e = error.what();
  }
  EXPECT_EQ(e,
            "scan.cl:9: entry point scan_chunks: takes 6 arguments; task 't' and the kernel's "
            "@scratch buffers pass 5");
}

TEST(Kernel, MalformedLaunchesAndScratchNameFileLineAndField) {
  const std::string entry = "__kernel void f(__global float* y, __global float* s) {}\n";
  // A launch rule before any @kernel, in a file of several launches.
  std::string e = ErrorOf("k.cl", "// @grid 1\n// @kernel f\n// @block 1\n// @kernel g\n");
  EXPECT_NE(e.find("k.cl:1: @grid: comes before any @kernel"), std::string::npos) << e;
  // The same entry point twice.
  e = ErrorOf("k.cl", "// @kernel f\n// @grid 1\n// @block 1\n// @kernel f\n");
  EXPECT_NE(e.find("k.cl:4: @kernel: entry point 'f' declared twice"), std::string::npos) << e;
  // The second launch without its own grid: named at its @kernel line.
  e = ErrorOf("k.cl", "// @kernel f\n// @grid 1\n// @block 1\n// @kernel g\n// @block 1\n");
  EXPECT_NE(e.find("k.cl:4: @grid: no '// @grid ...' launch rule for entry point g"),
            std::string::npos)
      << e;
  // Two rules for one launch.
  e = ErrorOf("k.cl",
              "// @kernel f\n// @grid 1\n// @block 1\n// @kernel g\n// @grid 1\n"
              "// @grid 2\n// @block 1\n");
  EXPECT_NE(e.find("k.cl:6: @grid: declared twice"), std::string::npos) << e;
  const std::string head = "// @kernel f\n// @grid 1\n// @block 1\n";
  e = ErrorOf("k.cl", head + "// @scratch s f32 N *\n" + entry);
  EXPECT_NE(e.find("k.cl:4: @scratch:"), std::string::npos) << e;
  e = ErrorOf("k.cl", head + "// @scratch s f32 N\n// @scratch s i32 2\n" + entry);
  EXPECT_NE(e.find("k.cl:5: @scratch: scratch buffer 's' declared twice"), std::string::npos) << e;
  e = ErrorOf("k.cl", head + "// @scratch s quad N\n" + entry);
  EXPECT_NE(e.find("k.cl:4: @scratch: unknown element type 'quad'"), std::string::npos) << e;
  e = ErrorOf("k.cl", head + "// @scratch s f32\n" + entry);
  EXPECT_NE(e.find("k.cl:4: @scratch: empty expression"), std::string::npos) << e;
  // A size the task does not have: at the @scratch line.
  e = NamesErrorOf(head + "// @scratch s f32 T * HH\n" + entry);
  EXPECT_NE(e.find("k.cl:4: @scratch: unknown name 'HH'"), std::string::npos) << e;
  // A negative count is the candidate's fault at those sizes, not the parser's.
  Kernel negative = ParseKernel("k.cl", head + "// @scratch s f32 N - 10\n" + entry);
  Env env;
  env.Set("N", 4);
  EXPECT_THROW(ScratchCounts(negative, {}, env), ExprError);
}

// With one @kernel the launch rule may stand anywhere, as it always could.
TEST(Kernel, ASingleLaunchKeepsItsAnnotationsInAnyOrder) {
  Kernel k = ParseKernel("k.cl", "// @grid 2\n// @block 4\n// @kernel f\n__kernel void f() {}\n");
  ASSERT_EQ(k.launches.size(), 1u);
  EXPECT_EQ(k.launches[0].entry, "f");
  EXPECT_EQ(k.launches[0].grid_line, 1);
  EXPECT_TRUE(k.scratch.empty());
}

const char* kDynamicShared = R"(// @kernel gemm
// @grid ceil_div(N, BN), ceil_div(M, BM)
// @block 256, 1
// @shared STAGES * (BM + BN) * 128 + 1024
// @param BM in [128, 256] default 128
// @param BN in [128, 256] default 256
// @param STAGES in [3, 4, 8] default 4
extern "C" __global__ void gemm(const __half* A, const __half* B, __half* C, int M, int N, int K) {
  extern __shared__ __align__(16) unsigned char smem[];
}
)";

// @shared: CUDA's dynamic shared memory per block, an expression over sizes and parameters that
// MakeLaunch evaluates with the grid and block.
TEST(Kernel, DynamicSharedMemoryIsPartOfTheLaunchRule) {
  Kernel k = ParseKernel("gemm.cu", kDynamicShared);
  ASSERT_TRUE(k.launches.at(0).shared);
  EXPECT_EQ(k.launches.at(0).shared->text(), "STAGES * (BM + BN) * 128 + 1024");
  EXPECT_EQ(k.launches.at(0).shared_line, 4);
  EXPECT_NO_THROW(CheckKernelNames(k, {"M", "N", "K"}, {"local_mem_bytes"}));
  Env sizes;
  sizes.Set("M", 4096);
  sizes.Set("N", 4096);
  sizes.Set("K", 4096);
  Launch l = MakeLaunch(k.launches.at(0), k.ResolveConfig({}), sizes);
  EXPECT_EQ(l.shared_bytes, 4 * (128 + 256) * 128 + 1024);
  EXPECT_EQ(l.grid, (std::vector<int64_t>{16, 32}));
  EXPECT_EQ(MakeLaunch(k.launches.at(0), k.ResolveConfig({{"STAGES", "3"}, {"BN", "128"}}), sizes)
                .shared_bytes,
            3 * 256 * 128 + 1024);
  // Without @shared a kernel asks for none.
  Kernel plain = ParseKernel("scale.cl", kGood);
  EXPECT_FALSE(plain.launches.at(0).shared);
  Env n;
  n.Set("N", 1000);
  EXPECT_EQ(MakeLaunch(plain.launches.at(0), plain.ResolveConfig({}), n).shared_bytes, 0);
  // A negative request is a launch-rule error (invalid_config), like a non-positive extent.
  Kernel negative = ParseKernel("k.cu",
                                "// @kernel f\n// @grid 1\n// @block 32\n// @shared K - 100\n"
                                "extern \"C\" __global__ void f(int K) {}\n");
  EXPECT_EQ(MakeLaunch(negative.launches.at(0), {}, sizes).shared_bytes, 3996);
  Env small;
  small.Set("K", 10);
  EXPECT_THROW(MakeLaunch(negative.launches.at(0), {}, small), ExprError);
}

TEST(Kernel, MalformedOrOpenCLSharedNamesFileLineAndField) {
  const std::string head = "// @kernel f\n// @grid 1\n// @block 1\n";
  std::string e = ErrorOf("k.cl", head + "// @shared 1024\n__kernel void f() {}\n");
  EXPECT_NE(e.find("k.cl:4: @shared: dynamic shared memory is CUDA only"), std::string::npos) << e;
  e = ErrorOf("k.cu", head + "// @shared 1024\n// @shared 2048\n");
  EXPECT_NE(e.find("k.cu:5: @shared: declared twice"), std::string::npos) << e;
  e = ErrorOf("k.cu", head + "// @shared 1024, 2048\n");
  EXPECT_NE(e.find("k.cu:4: @shared: expected one expression"), std::string::npos) << e;
  e = ErrorOf("k.cu", head + "// @shared\n");
  EXPECT_NE(e.find("k.cu:4: @shared:"), std::string::npos) << e;
  e = ErrorOf("k.cu", head + "// @shared 1024 *\n");
  EXPECT_NE(e.find("k.cu:4: @shared:"), std::string::npos) << e;
  // Names: the sizes and the parameters, as for @grid; device properties are for constraints.
  try {
    CheckKernelNames(ParseKernel("k.cu", head + "// @shared TILE * local_mem_bytes\n"), {"N"},
                     {"local_mem_bytes"});
    ADD_FAILURE() << "an unknown name in @shared passed";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("k.cu:4: @shared: unknown name 'TILE'"),
              std::string::npos)
        << error.what();
  }
}

// Over the device's limit per block: invalid_config before anything is compiled, with the figures.
TEST(Kernel, DynamicSharedMemoryOverTheDeviceLimitIsAnInvalidConfig) {
  Task task = LoadTask(std::string(KF_TASKS) + "/gemm_f16");
  Kernel k = ParseKernel("gemm.cu", kDynamicShared);
  DeviceInfo h200;
  h200.backend = "cuda";
  h200.name = "NVIDIA H200";
  h200.max_work_group_size = 1024;
  h200.local_mem_bytes = 232448;  // the opt-in limit per block
  const SizeSet& record = task.bench_sizes.front();
  EXPECT_FALSE(Precheck(task, k, k.ResolveConfig({}), h200, record));  // 197632 bytes
  std::optional<Evaluation> over =
      Precheck(task, k, k.ResolveConfig({{"STAGES", "8"}}), h200, record);
  ASSERT_TRUE(over);
  EXPECT_EQ(over->status, Status::kInvalidConfig);
  EXPECT_NE(over->reason.find("@shared asks for 394240 bytes of dynamic shared memory per block; "
                              "the device allows at most 232448"),
            std::string::npos)
      << over->reason;
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
  EXPECT_EQ(k.launches.at(0).entry, "f");
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
