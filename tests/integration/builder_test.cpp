// The builder pool compiles CUDA kernels with no GPU (NVRTC for a named architecture) in processes
// of its own: a kernel comes back as a cubin with its PTX listing, a compile error with its log,
// and a compile past its deadline is ended by killing its builder, after which a fresh one
// compiles the next. Runs wherever NVRTC is (CI has it); skipped, saying so, where it is not.
#include "host/builder.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <sstream>

#include "backend/cuda/cuda_api.hpp"
#include "kf_process.hpp"

namespace kf {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class BuilderPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    if (!cuda::Nvrtc::Load(&error)) GTEST_SKIP() << "NVRTC not available here: " << error;
    setenv("KF_CACHE_DIR", fmt::format("{}/builder.{}", KF_TEST_CACHE, getpid()).c_str(), 1);
    options_.binary = testing::KfBinary();
    options_.target.backend = "cuda";
    options_.target.name = "a test H200";
    options_.target.arch = "sm_90";
    options_.target.driver_version = "test";
    options_.jobs = 2;
  }
  // Submits every request at once and waits for all.
  std::vector<CompileResult> BuildAll(BuilderPool& pool, const std::vector<CompileRequest>& rs) {
    std::vector<std::future<std::optional<CompileResult>>> out;
    for (const CompileRequest& r : rs) {
      auto promise = std::make_shared<std::promise<std::optional<CompileResult>>>();
      out.push_back(promise->get_future());
      pool.Submit(r, [promise](std::optional<CompileResult> c) { promise->set_value(c); });
    }
    std::vector<CompileResult> results;
    for (auto& f : out) {
      std::optional<CompileResult> c = f.get();
      EXPECT_TRUE(c) << "the builder could not start";
      results.push_back(c.value_or(CompileResult{}));
    }
    return results;
  }
  CompileRequest Request(const std::string& path, const std::string& entry, const char* block) {
    return {Read(path), {entry}, {{"BLOCK", block}}};
  }
  BuilderOptions options_;
};

TEST_F(BuilderPoolTest, CompilesCubinsForTheNamedArchitectureWithoutAGpu) {
  BuilderPool pool(options_);
  std::string rope = std::string(KF_TASKS) + "/rope_llama3/";
  std::vector<CompileResult> r =
      BuildAll(pool, {Request(rope + "baseline.cu", "rope_baseline", "256"),
                      Request(rope + "baseline.cu", "rope_baseline", "128"),
                      Request(std::string(KF_TEST_DATA) + "/kernels/rope_syntax_error.cu",
                              "rope_baseline", "256")});
  ASSERT_EQ(r.size(), 3u);
  for (int i : {0, 1}) {
    EXPECT_TRUE(r[i].ok) << r[i].log;
    EXPECT_GT(r[i].artifact.binary.size(), 1000u);
    EXPECT_NE(r[i].artifact.listing.find(".target sm_90"), std::string::npos);
    EXPECT_EQ(r[i].artifact.symbols.size(), 1u);
  }
  EXPECT_FALSE(r[2].ok);
  EXPECT_NE(r[2].log.find("error"), std::string::npos) << r[2].log;
  // The same request again comes from the shared compile cache.
  std::vector<CompileResult> again =
      BuildAll(pool, {Request(rope + "baseline.cu", "rope_baseline", "256")});
  EXPECT_TRUE(again[0].cache_hit);
  EXPECT_EQ(again[0].artifact.binary, r[0].artifact.binary);
  EXPECT_EQ(pool.compiled(), 4);
}

TEST_F(BuilderPoolTest, ACompilePastItsDeadlineKillsItsBuilderAndTheNextCompiles) {
  options_.compile_timeout_s = 2;
  options_.jobs = 1;
  BuilderPool pool(options_);
  auto start = std::chrono::steady_clock::now();
  std::vector<CompileResult> r = BuildAll(
      pool,
      {Request(std::string(KF_TEST_DATA) + "/kernels/slow_compile.cu", "rope_baseline", "256"),
       Request(std::string(KF_TASKS) + "/rope_llama3/baseline.cu", "rope_baseline", "512")});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  EXPECT_FALSE(r[0].ok);
  EXPECT_NE(r[0].log.find("compilation ran past its deadline of 2 s"), std::string::npos)
      << r[0].log;
  EXPECT_TRUE(r[1].ok) << r[1].log;
  EXPECT_EQ(pool.deadline_kills(), 1);
}

}  // namespace
}  // namespace kf
