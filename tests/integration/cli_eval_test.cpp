// End-to-end tests of the kfoundry command line on real devices: the verdicts of `eval` on good
// and deliberately bad kernels, the JSON contract and the exit codes. OpenCL tests run on PoCL;
// CUDA tests run where an NVIDIA GPU is, and are skipped (saying so) elsewhere.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "kf_process.hpp"

namespace {

using Result = kf::testing::KfResult;

Result RunKf(const std::string& args, const std::string& env = "") {
  return kf::testing::RunKfoundry(args, env);
}

std::string Rope(const std::string& file) {
  return std::string(KF_TASKS) + "/rope_llama3/" + file;
}
std::string Data(const std::string& file) {
  return std::string(KF_TEST_DATA) + "/kernels/" + file;
}

using kf::testing::HasBackend;

Result Eval(const std::string& backend, const std::string& kernel, const std::string& extra = "") {
  Result r =
      RunKf(fmt::format("eval rope_llama3 {} --device {} --json {}", kernel, backend, extra));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.json.is_object()) << "stdout is not one JSON object:\n"
                                  << r.out << "\nstderr:\n"
                                  << r.err;
  return r;
}

void ExpectOk(const Result& r) {
  ASSERT_TRUE(r.json.is_object());
  EXPECT_EQ(r.json["status"], "ok") << r.json.dump(2);
  EXPECT_LE(r.json["bad_ratio"].get<double>(), 1e-3);
  EXPECT_EQ(r.json["nan_count"], 0);
  EXPECT_GT(r.json["time_ms"]["median"].get<double>(), 0);
  EXPECT_GE(r.json["time_ms"]["runs"].get<int>(), 10);
  EXPECT_GT(r.json["baseline_time_ms"]["median"].get<double>(), 0);
  EXPECT_GT(r.json["speedup"].get<double>(), 0);
  EXPECT_GT(r.json["bandwidth_gbs"].get<double>(), 0);
  EXPECT_EQ(r.json["check_seeds"].size(), 6u);  // 3 check size sets x 2 fresh seeds
  for (const char* key : {"device", "config", "max_abs_err", "max_rel_err", "roofline_fraction",
                          "descriptor", "compile_log", "hints"}) {
    EXPECT_TRUE(r.json.contains(key)) << key;
  }
}

class Backends : public ::testing::Test {
 protected:
  void Require(const std::string& backend) {
    if (!HasBackend(backend)) GTEST_SKIP() << "no " << backend << " device on this machine";
  }
};

#define BACKEND_TESTS(Suite, backend, ext)                                                      \
  class Suite : public Backends {                                                               \
   protected:                                                                                   \
    void SetUp() override { Require(backend); }                                                 \
  };                                                                                            \
  TEST_F(Suite, BaselineIsOk) {                                                                 \
    ExpectOk(Eval(backend, Rope("baseline" ext)));                                              \
  }                                                                                             \
  TEST_F(Suite, ImprovedKernelIsOk) {                                                           \
    ExpectOk(Eval(backend, Rope("rope_vec8" ext)));                                             \
  }                                                                                             \
  TEST_F(Suite, SetOverridesTheConfig) {                                                        \
    Result r = Eval(backend, Rope("rope_vec8" ext), "--set HPT=1 --set BLOCK=64");              \
    ExpectOk(r);                                                                                \
    EXPECT_EQ(r.json["config"]["HPT"], 1);                                                      \
    EXPECT_EQ(r.json["config"]["BLOCK"], 64);                                                   \
  }                                                                                             \
  TEST_F(Suite, WrongConventionIsIncorrect) {                                                   \
    Result r = Eval(backend, Data("rope_interleaved" ext));                                     \
    EXPECT_EQ(r.json["status"], "incorrect") << r.json.dump(2);                                 \
    EXPECT_NE(r.json["reason"].get<std::string>().find("out of tolerance"), std::string::npos); \
    EXPECT_GT(r.json["bad_ratio"].get<double>(), 0.1);                                          \
  }                                                                                             \
  TEST_F(Suite, SyntaxErrorIsCompileErrorWithTheCompilersMessage) {                             \
    Result r = Eval(backend, Data("rope_syntax_error" ext));                                    \
    EXPECT_EQ(r.json["status"], "compile_error") << r.json.dump(2);                             \
    EXPECT_NE(r.json["compile_log"].get<std::string>().find("expected"), std::string::npos)     \
        << r.json["compile_log"];                                                               \
    EXPECT_TRUE(r.json["time_ms"].is_null());                                                   \
  }                                                                                             \
  TEST_F(Suite, NaNWritingKernelIsNan) {                                                        \
    Result r = Eval(backend, Data("rope_nan" ext));                                             \
    EXPECT_EQ(r.json["status"], "nan") << r.json.dump(2);                                       \
    EXPECT_GT(r.json["nan_count"].get<long long>(), 0);                                         \
  }                                                                                             \
  TEST_F(Suite, ACompilePastItsDeadlineIsACompileErrorSayingSo) {                               \
    auto start = std::chrono::steady_clock::now();                                              \
    Result r = Eval(backend, Data("slow_compile" ext), "--compile-timeout 2");                  \
    EXPECT_EQ(r.json["status"], "compile_error") << r.json.dump(2);                             \
    EXPECT_NE(r.json["reason"].get<std::string>().find("ran past its deadline of 2 s"),         \
              std::string::npos)                                                                \
        << r.json["reason"];                                                                    \
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));              \
  }

BACKEND_TESTS(OpenCLEval, "opencl", ".cl")
BACKEND_TESTS(CudaEval, "cuda", ".cu")

// @shared: 96 KB of dynamic shared memory runs only if the backend raised the kernel's limit
// (cuFuncSetAttribute) before launching; 300 KB is over every device's limit and is refused
// before anything is compiled.
TEST(CudaSharedMemory, MoreThan48KBOfDynamicSharedMemoryRuns) {
  if (!HasBackend("cuda")) GTEST_SKIP() << "no cuda device on this machine";
  Result r = Eval("cuda", Data("rope_dynamic_shared.cu"));
  ExpectOk(r);
  EXPECT_EQ(r.json["config"]["SHARED_KB"], 96);
}

TEST(CudaSharedMemory, ARequestOverTheDevicesLimitIsAnInvalidConfig) {
  if (!HasBackend("cuda")) GTEST_SKIP() << "no cuda device on this machine";
  Result r = Eval("cuda", Data("rope_dynamic_shared.cu"), "--set SHARED_KB=300");
  EXPECT_EQ(r.json["status"], "invalid_config") << r.json.dump(2);
  EXPECT_NE(r.json["reason"].get<std::string>().find(
                "@shared asks for 307200 bytes of dynamic shared memory per block"),
            std::string::npos)
      << r.json["reason"];
}

TEST(OpenCLChecks, AKernelThatCheatsOnlyWhenTimedIsCaughtByTheTimedRecheck) {
  if (!HasBackend("opencl")) GTEST_SKIP() << "no opencl device on this machine";
  Result r = Eval("opencl", Data("rope_cheats_when_timed.cl"), "--sizes cpu");
  EXPECT_EQ(r.json["status"], "incorrect") << r.json.dump(2);
  EXPECT_NE(r.json["reason"].get<std::string>().find("the timed launch's output differs"),
            std::string::npos)
      << r.json["reason"];
}

TEST(OpenCLChecks, ATimeBelowThePhysicsFloorIsImplausible) {
  if (!HasBackend("opencl")) GTEST_SKIP() << "no opencl device on this machine";
  // With the peak bandwidth declared at 1 MB/s, any real run moves the task's minimum bytes
  // "too fast": the plausibility floor must turn an otherwise correct kernel into `implausible`.
  Result r = RunKf(fmt::format("eval rope_llama3 {} --device opencl --json", Rope("baseline.cl")),
                   "KF_PEAK_BANDWIDTH_GBS=0.001");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json["status"], "implausible") << r.json.dump(2);
  EXPECT_NE(r.json["reason"].get<std::string>().find("exceeds the device's peak"),
            std::string::npos)
      << r.json["reason"];
}

TEST(OpenCLChecks, ACrashNamesTheSizeSetTheSeedAndTheLaunch) {
  if (!HasBackend("opencl")) GTEST_SKIP() << "no opencl device on this machine";
  // Correct at 'small' (two seeds checked), dies at the first seed of 'ragged'.
  Result r = Eval("opencl", Data("rope_crash_ragged.cl"));
  ASSERT_EQ(r.json["status"], "crash") << r.json.dump(2);
  const std::string reason = r.json["reason"].get<std::string>();
  EXPECT_NE(reason.find("SIGSEGV"), std::string::npos) << reason;
  ASSERT_EQ(r.json["check_seeds"].size(), 3u) << r.json.dump(2);
  const unsigned long long seed = r.json["check_seeds"][2].get<unsigned long long>();
  EXPECT_NE(reason.find(fmt::format("check at size set 'ragged', seed {}, candidate launch", seed)),
            std::string::npos)
      << reason;
  EXPECT_EQ(r.json["sizes"], "ragged");
  // Nothing was compared in the evaluation that crashed: no figures, not zeros.
  for (const char* key : {"max_abs_err", "max_rel_err", "bad_ratio", "nan_count"})
    EXPECT_TRUE(r.json[key].is_null()) << key << ": " << r.json[key];
}

TEST(OpenCLChecks, ALaunchPastItsDeadlineNamesTheSizeSetTheSeedAndTheLaunch) {
  if (!HasBackend("opencl")) GTEST_SKIP() << "no opencl device on this machine";
  Result r = Eval("opencl", std::string(KF_TEST_DATA) + "/corpus/infinite_loop.cl",
                  "--launch-floor 1 --launch-ceiling 1");
  ASSERT_EQ(r.json["status"], "timeout") << r.json.dump(2);
  const std::string reason = r.json["reason"].get<std::string>();
  ASSERT_EQ(r.json["check_seeds"].size(), 1u) << r.json.dump(2);
  EXPECT_NE(reason.find(fmt::format("check at size set 'small', seed {}, candidate launch",
                                    r.json["check_seeds"][0].get<unsigned long long>())),
            std::string::npos)
      << reason;
  EXPECT_EQ(r.json["sizes"], "small");
  // PoCL compiles at a group size's first launch: that launch had more time, and says so.
  EXPECT_NE(reason.find("for compiling at the first launch at this group size"), std::string::npos)
      << reason;
}

TEST(OpenCLChecks, TheCompileAtAFirstLaunchIsNotChargedToTheLaunchDeadline) {
  if (!HasBackend("opencl")) GTEST_SKIP() << "no opencl device on this machine";
  // PoCL builds a kernel's work-group function when a launch at a new group size first runs: for
  // this attention tile, 2-3 s on a 2-core machine with empty caches, over a 1 s launch deadline
  // (its launches take ~3 ms). Empty caches (PoCL's and ours) so that the build happens here.
  static int n = 0;
  const std::string caches = fmt::format("{}/first-launch.{}.{}", KF_TEST_CACHE, getpid(), ++n);
  Result r = RunKf(fmt::format("eval attention_fwd {}/attention_fwd/flash_gemm.cl --device opencl "
                               "--json --set BLOCK_M=16 --set BLOCK_N=16 --set DV=16 --set RM=4 "
                               "--set RN=2 --launch-floor 1 --launch-ceiling 1",
                               KF_TASKS),
                   fmt::format("POCL_CACHE_DIR={0}/pocl KF_CACHE_DIR={0}/kf", caches));
  ASSERT_TRUE(r.json.is_object()) << r.out << r.err;
  EXPECT_EQ(r.json["status"], "ok") << r.json.dump(2);
  EXPECT_FALSE(r.json["compile_cache_hit"].get<bool>()) << "the caches were not empty";
  std::filesystem::remove_all(caches);
}

TEST(OpenCLChecks, ACompileErrorPointsAtTheKernelsOwnFileAndLine) {
  if (!HasBackend("opencl")) GTEST_SKIP() << "no opencl device on this machine";
  // The error is at line 9, column 11 of the file (`int x = ;`), not of a driver's temporary file.
  Result r = Eval("opencl", Data("rope_syntax_error.cl"));
  ASSERT_EQ(r.json["status"], "compile_error") << r.json.dump(2);
  const std::string log = r.json["compile_log"].get<std::string>();
  EXPECT_NE(log.find(Data("rope_syntax_error.cl") + ":9:11:"), std::string::npos) << log;
  EXPECT_EQ(log.find("tempfile"), std::string::npos) << log;
  EXPECT_NE(r.json["reason"].get<std::string>().find("rope_syntax_error.cl:9:11:"),
            std::string::npos)
      << r.json["reason"];
  EXPECT_TRUE(r.json["max_abs_err"].is_null()) << r.json["max_abs_err"];
  Result text =
      RunKf(fmt::format("eval rope_llama3 {} --device opencl", Data("rope_syntax_error.cl")));
  EXPECT_NE(text.out.find("errors      not reached"), std::string::npos) << text.out;
}

TEST(Cli, UnknownNameInALaunchRuleExitsTwoNamingTheLine) {
  std::string file = fmt::format("{}/unknown_name.{}.cl", KF_TEST_CACHE, getpid());
  std::filesystem::create_directories(KF_TEST_CACHE);  // the first test of a fresh build too
  std::ofstream(file) << "// @kernel f\n// @param BLOCK in [64]\n// @grid ceil_div(B * SS, BLOCK)\n"
                         "// @block BLOCK\n__kernel void f() {}\n";
  Result r = RunKf(fmt::format("eval rope_llama3 {}", file));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(file + ":3: @grid: unknown name 'SS'"), std::string::npos) << r.err;
  std::remove(file.c_str());
}

TEST(Cli, UnknownNameInTheTasksBaselineExitsTwoNamingTheLine) {
  if (!HasBackend("opencl")) GTEST_SKIP() << "no opencl device on this machine";
  std::string dir = fmt::format("{}/badbaseline.{}", KF_TEST_CACHE, getpid());
  std::system(fmt::format("rm -rf {0} && cp -r {1}/rope_llama3 {0}", dir, KF_TASKS).c_str());
  std::system(fmt::format("sed -i 's/@grid ceil_div(B \\* S /@grid ceil_div(B * SS /' "
                          "{}/baseline.cl",
                          dir)
                  .c_str());
  Result r = RunKf(fmt::format("eval {} {}/rope_vec8.cl --device opencl", dir, dir));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("baseline.cl:3: @grid: unknown name 'SS'"), std::string::npos) << r.err;
  std::system(fmt::format("rm -rf {}", dir).c_str());
}

TEST(Cli, TasksJsonHasTheDesignShape) {
  Result r = RunKf("tasks --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(r.json.is_object()) << r.out;
  // The whole library, each task in both languages with its op class.
  std::map<std::string, std::string> op_classes;
  for (const auto& task : r.json["tasks"]) {
    op_classes[task["name"]] = task["op_class"];
    EXPECT_EQ(task["languages"], nlohmann::json({"cuda", "opencl"})) << task["name"];
  }
  EXPECT_EQ(op_classes, (std::map<std::string, std::string>{{"attention_fwd", "attention"},
                                                            {"gemm_f16", "gemm"},
                                                            {"gemm_f32", "gemm"},
                                                            {"layernorm", "layernorm"},
                                                            {"ray_sphere", "raytrace"},
                                                            {"reduce_sum", "reduction"},
                                                            {"rmsnorm", "rmsnorm"},
                                                            {"rope_llama3", "rope"},
                                                            {"softmax_rows", "softmax"},
                                                            {"spmv_csr", "spmv"},
                                                            {"transpose_f32", "transpose"}}));
  auto rope = std::find_if(r.json["tasks"].begin(), r.json["tasks"].end(),
                           [](const nlohmann::json& t) { return t["name"] == "rope_llama3"; });
  ASSERT_NE(rope, r.json["tasks"].end());
  const auto& t = *rope;
  EXPECT_EQ(t["name"], "rope_llama3");
  EXPECT_EQ(t["op_class"], "rope");
  EXPECT_EQ(t["languages"], nlohmann::json({"cuda", "opencl"}));
  EXPECT_EQ(t["reference"]["opencl"], "reference.cl");
  EXPECT_EQ(t["baseline"]["cuda"], "baseline.cu");
  EXPECT_TRUE(t["templates"]["cuda"].is_array());
  EXPECT_TRUE(t["path"].is_string());
}

TEST(Cli, DevicesJsonListsEachDeviceWithItsProperties) {
  Result r = RunKf("devices --json");
  ASSERT_TRUE(r.json.is_object()) << r.out;
  for (const auto& d : r.json["devices"]) {
    for (const char* key : {"id", "name", "vendor", "compute_units", "max_work_group_size",
                            "local_mem_bytes", "sub_group_width", "global_mem_bytes"}) {
      EXPECT_TRUE(d.contains(key)) << key;
    }
  }
  EXPECT_EQ(r.exit_code, r.json["devices"].empty() ? 3 : 0);
}

TEST(Cli, MalformedTaskExitsTwoNamingFileLineAndField) {
  std::string dir = fmt::format("{}/badtask.{}", KF_TEST_CACHE, getpid());
  std::system(fmt::format("rm -rf {0} && cp -r {1}/rope_llama3 {0}", dir, KF_TASKS).c_str());
  std::system(
      fmt::format("sed -i 's/role = \"out\"/role = \"sideways\"/' {}/task.toml", dir).c_str());
  Result r = RunKf(fmt::format("eval {} {}", dir, Rope("baseline.cl")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("task.toml:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("args.q_out.role"), std::string::npos) << r.err;
  std::system(fmt::format("rm -rf {}", dir).c_str());
}

TEST(Cli, MalformedAnnotationExitsTwo) {
  std::string file = fmt::format("{}/bad_annotation.{}.cl", KF_TEST_CACHE, getpid());
  std::ofstream(file) << "// @kernel f\n// @grid ceil_div(B,\n// @block 64\n__kernel void f() {}\n";
  Result r = RunKf(fmt::format("eval rope_llama3 {}", file));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(":2: @grid:"), std::string::npos) << r.err;
}

TEST(Cli, UnknownParameterValueExitsTwo) {
  Result r = RunKf(fmt::format("eval rope_llama3 {} --set BLOCK=17", Rope("baseline.cl")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("BLOCK"), std::string::npos) << r.err;
}

TEST(Cli, UnknownDeviceExitsThree) {
  Result r = RunKf(fmt::format("eval rope_llama3 {} --device opencl:99", Rope("baseline.cl")));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("no device matches"), std::string::npos) << r.err;
}

TEST(Cli, UnknownTaskExitsTwo) {
  Result r = RunKf(fmt::format("eval no_such_task {}", Rope("baseline.cl")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("rope_llama3"), std::string::npos)
      << "the message should list the bundled tasks: " << r.err;
}

TEST(Cli, BadUsageExitsTwo) {
  EXPECT_EQ(RunKf("eval").exit_code, 2);
  EXPECT_EQ(RunKf("frobnicate").exit_code, 2);
  EXPECT_EQ(RunKf("--help").exit_code, 0);
}

}  // namespace
