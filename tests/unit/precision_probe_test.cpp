// The precision probe's arithmetic (no device): the split of an input into the part a lower
// precision keeps and the part only the task's precision sees, and the reading of the outputs; the
// ghost replay's no-op source; a task's `precision` as the loader takes it.

#include "eval/precision_probe.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>

#include "core/input_error.hpp"
#include "core/task.hpp"
#include "eval/ghost_replay.hpp"

namespace kf {
namespace {

TEST(RoundToBits, KeepsTheGivenSignificandBits) {
  EXPECT_EQ(RoundToBits(1.0 + std::ldexp(1.0, -12), 11), 1.0);  // below half of fp16's last bit
  EXPECT_EQ(RoundToBits(1.0 + std::ldexp(1.0, -10), 11), 1.0 + std::ldexp(1.0, -10));
  EXPECT_EQ(RoundToBits(-3.0, 2), -3.0);
  EXPECT_EQ(RoundToBits(1.25, 2), 1.0);  // a tie rounds to even
  EXPECT_EQ(RoundToBits(0.0, 11), 0.0);
}

HostBuffer Uniform(size_t n) {
  HostBuffer b;
  b.dtype = DType::kF32;
  b.count = n;
  b.bytes.resize(n * 4);
  for (size_t i = 0; i < n; ++i)
    StoreElement(b.bytes.data(), b.dtype, i, std::sin(static_cast<double>(i) * 1.7) * 0.9);
  return b;
}

TEST(SplitForProbe, TheHighPartIsWhatTheLowerPrecisionKeepsOfTheFullOne) {
  HostBuffer drawn = Uniform(1000), high, full;
  SplitForProbe(drawn, 11, 24, 7, &high, &full);
  int moved = 0;
  for (size_t i = 0; i < drawn.count; ++i) {
    double h = LoadElement(high.bytes.data(), DType::kF32, i);
    double x = LoadElement(full.bytes.data(), DType::kF32, i);
    EXPECT_EQ(RoundToBits(h, 11), h) << i;
    EXPECT_EQ(RoundToBits(x, 11), h) << i;  // TF32 or fp16 rounding of x gives h
    EXPECT_EQ(static_cast<double>(static_cast<float>(x)), x) << i;
    moved += x != h;
  }
  EXPECT_GT(moved, 900);  // nearly every element carries bits only fp32 keeps
  SplitForProbe(drawn, 8, 11, 7, &high, &full);  // tf32 against bf16
  for (size_t i = 0; i < drawn.count; ++i) {
    double x = LoadElement(full.bytes.data(), DType::kF32, i);
    EXPECT_EQ(RoundToBits(x, 11), x) << i;
    EXPECT_EQ(RoundToBits(x, 8), LoadElement(high.bytes.data(), DType::kF32, i)) << i;
  }
}

TEST(ReadProbe, ACandidateThatIgnoresTheLowBitsLostThem) {
  std::vector<double> ref_full = {1.001, 2.002, -3.003}, ref_high = {1.0, 2.0, -3.0};
  EXPECT_FALSE(ReadProbe(ref_full, ref_high, ref_full, ref_high).Lost());  // full precision
  std::vector<double> rounded = {1.0, 2.0, -3.0};
  ProbeReading r = ReadProbe(rounded, rounded, ref_full, ref_high);
  EXPECT_TRUE(r.Lost());
  // Far from the function: the ordinary checks judge it, not the probe.
  std::vector<double> garbage = {5, 5, 5};
  EXPECT_FALSE(ReadProbe(garbage, garbage, ref_full, ref_high).Lost());
  std::vector<double> nan = {NAN, 1, 1};
  EXPECT_FALSE(ReadProbe(nan, nan, ref_full, ref_high).Lost());
}

TEST(PrecisionProbe, ProbesFp32AndTf32Only) {
  EXPECT_EQ(ProbedLowerBits("fp32"), 11);
  EXPECT_EQ(ProbedLowerBits("tf32"), 8);
  EXPECT_EQ(ProbedLowerBits("fp16-accumulate-fp32"), 0);
  EXPECT_EQ(ProbedLowerBits(""), 0);
}

TEST(GhostKernel, HasTheTasksSignatureAndDoesNothing) {
  Task gemm = LoadTask(std::string(KF_TASKS) + "/gemm_f32");
  EXPECT_EQ(GhostKernelSource(gemm, Language::kOpenCL),
            "__kernel void kf_ghost(__global uchar* a0, __global uchar* a1, __global uchar* a2, "
            "int a3, int a4, int a5) {}\n");
  EXPECT_EQ(GhostKernelSource(gemm, Language::kCuda),
            "extern \"C\" __global__ void kf_ghost(void* a0, void* a1, void* a2, int a3, int a4, "
            "int a5) {}\n");
}

TEST(TaskPrecision, IsReadAndAnUnknownOneIsRefused) {
  EXPECT_EQ(LoadTask(std::string(KF_TASKS) + "/gemm_f32").precision, "fp32");
  EXPECT_EQ(LoadTask(std::string(KF_TASKS) + "/rope_llama3").precision, "");
  const std::string dir = std::string(KF_TASKS) + "/gemm_f32";
  std::ifstream in(dir + "/task.toml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string from = "precision = \"fp32\"";
  ASSERT_NE(text.find(from), std::string::npos);
  EXPECT_NO_THROW(LoadTaskFromText(dir, text));
  text.replace(text.find(from), from.size(), "precision = \"fp8\"");
  EXPECT_THROW(LoadTaskFromText(dir, text), InputError);
}

}  // namespace
}  // namespace kf
