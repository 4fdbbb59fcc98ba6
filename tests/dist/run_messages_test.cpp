// A run job names its task's variant and carries its defines (issue 33), so a run worker builds
// the same task from the bundle and a build worker, which reads no task, compiles with the same
// macros. No broker needed.

#include "dist/run_messages.hpp"

#include <gtest/gtest.h>

#include "core/kernel.hpp"

namespace kf {
namespace {

TEST(RunMessages, AJobCarriesTheTasksVariantAndDefines) {
  RunJobMessage job;
  job.run = "r";
  job.results_queue = "q";
  job.task_id = "abc";
  job.task_name = "gemm_f16.bf16";
  job.task_variant = "bf16";
  job.task_defines = {{"KF_BF16", "1"}};
  job.candidate.key = "r.job0";
  job.candidate.kernel = ParseKernel("k.cl",
                                     "// @kernel f\n// @grid N\n// @block 1\n"
                                     "__kernel void f(__global float* x, int N) { x[0] = 1; }\n");
  const RunJobMessage back = RunJobMessageFromJson(RunJobMessageToJson(job));
  EXPECT_EQ(back.task_variant, "bf16");
  EXPECT_EQ(back.task_defines, job.task_defines);
  // A job of a task without variants says nothing of them, and reads back without any.
  job.task_variant.clear();
  job.task_defines.clear();
  const nlohmann::json plain = RunJobMessageToJson(job);
  EXPECT_FALSE(plain.contains("task_variant"));
  EXPECT_FALSE(plain.contains("task_defines"));
  EXPECT_EQ(RunJobMessageFromJson(plain).task_variant, "");
  EXPECT_TRUE(RunJobMessageFromJson(plain).task_defines.empty());
}

}  // namespace
}  // namespace kf
