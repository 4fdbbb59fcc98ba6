// `kfoundry suite` on PoCL (issue 31): three small tasks (19_ReLU imported with a correct baseline
// kernel, the same with a wrong one, and the library's rope_llama3 without a PyTorch reference)
// give figures that agree with the per-problem table, a task with no correct kernel counts as not
// correct, a suite stopped after two tasks continues with --resume (the stored runs resumed, the
// third started), a finished suite resumed judges nothing at all, and a suite whose runs exist is
// refused without --resume, as are a folder with no task, one task twice and a bad --name. Needs
// python3 with PyTorch for the imported tasks; skipped without.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include "kf_process.hpp"
#include "torch_support.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;
using testing::RunKfoundry;

const std::string kTorchRef = std::string(KF_TEST_DATA) + "/torch_reference";

// 19_ReLU imported into `dir`, named `name`, with `kernel` of tests/data/torch_reference as its
// OpenCL baseline and only kernel.
void ImportRelu(const std::string& dir, const std::string& name, const std::string& kernel) {
  testing::KfResult r =
      RunKfoundry(fmt::format("import {}/19_ReLU.py -o {}", testing::kProblems, dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  fs::copy_file(kTorchRef + "/" + kernel, dir + "/" + kernel);
  std::string toml = testing::ReadText(dir + "/task.toml");
  // `kernel` alone: import's starting kernels (a baseline and templates) left out.
  toml = std::regex_replace(toml, std::regex("\n(baseline|templates) = \\{[^\n]*"), "");
  toml.replace(toml.find("name = \"19_ReLU\""), 16, "name = \"" + name + "\"");
  std::ofstream(dir + "/task.toml") << toml << "baseline = { opencl = \"" << kernel << "\" }\n";
}

std::string Suite(const std::string& dir, const std::string& dirs, const std::string& extra) {
  return fmt::format(
      "suite {} --device opencl --budget 4 --tune-budget 2 --top 1 --repeats 1 --runs 5 "
      "--warmup 1 --store sqlite:{}/kf.db --out {}/out {}",
      dirs, dir, dir, extra);
}

const nlohmann::json& Row(const nlohmann::json& out, const std::string& problem) {
  for (const nlohmann::json& r : out["problems"])
    if (r["problem"] == problem) return r;
  ADD_FAILURE() << "no row for " << problem << " in " << out.dump();
  return out["problems"][0];
}

// The figures recomputed from the rows: KernelBench's definitions over the table.
void ExpectFiguresMatchRows(const nlohmann::json& out) {
  const nlohmann::json& rows = out["problems"];
  const nlohmann::json& f = out["figures"];
  double n = static_cast<double>(rows.size());
  int correct = 0, fast1 = 0, fast2 = 0, torch = 0, roofline_n = 0;
  double log_sum = 0, roofline_sum = 0;
  for (const nlohmann::json& r : rows) {
    torch += r["torch_reference"].get<bool>();
    if (r["status"] != "correct") {
      EXPECT_TRUE(r["eager_speedup"].is_null()) << r.dump();
      continue;
    }
    ++correct;
    double x = r["eager_speedup"].get<double>();
    fast1 += x > 1;
    fast2 += x > 2;
    log_sum += std::log(x);
    if (r["roofline_fraction"].is_number()) {
      roofline_sum += r["roofline_fraction"].get<double>();
      ++roofline_n;
    }
  }
  EXPECT_EQ(f["problems"], rows.size());
  EXPECT_EQ(f["correct"], correct);
  EXPECT_DOUBLE_EQ(f["correctness_rate"].get<double>(), correct / n);
  EXPECT_EQ(f["eager"]["problems"], rows.size());
  EXPECT_DOUBLE_EQ(f["eager"]["fast_0"].get<double>(), correct / n);
  EXPECT_DOUBLE_EQ(f["eager"]["fast_1"].get<double>(), fast1 / n);
  EXPECT_DOUBLE_EQ(f["eager"]["fast_2"].get<double>(), fast2 / n);
  ASSERT_GT(correct, 0);
  EXPECT_NEAR(f["eager"]["geomean_speedup"].get<double>(), std::exp(log_sum / correct), 1e-9);
  ASSERT_GT(roofline_n, 0);
  EXPECT_EQ(f["roofline_problems"], roofline_n);
  EXPECT_NEAR(f["mean_roofline_fraction"].get<double>(), roofline_sum / roofline_n, 1e-12);
  // torch.compile: over the PyTorch-referenced problems where it was timed, else unavailable.
  const nlohmann::json& c = f["compile"];
  if (c["problems"] == 0) {
    EXPECT_FALSE(c["unavailable"].get<std::string>().empty()) << c.dump();
    EXPECT_FALSE(c.contains("fast_1")) << "zeros printed for a figure that does not exist";
  } else {
    EXPECT_LE(c["problems"].get<int>(), torch);
  }
}

TEST(OpenCLSuite, FiguresAgreeWithTheTableAndAResumedSuiteJudgesNothingAgain) {
  if (!testing::HaveTorch()) GTEST_SKIP() << "no python3 with PyTorch (Debian: python3-torch)";
  if (!testing::HasBackend("opencl")) GTEST_SKIP() << "no OpenCL device (PoCL)";
  std::string dir = testing::Scratch("suite", "three");
  ImportRelu(dir + "/tasks/relu", "19_ReLU", "relu.cl");
  ImportRelu(dir + "/tasks/relu_wrong", "19_ReLU_wrong", "relu_last_wrong.cl");
  std::string rope = std::string(KF_TASKS) + "/rope_llama3";

  // A suite stopped after its first two tasks (a folder of task folders)...
  testing::KfResult first = RunKfoundry(Suite(dir, dir + "/tasks", "--json"));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_TRUE(first.json.is_object()) << first.out;
  ASSERT_EQ(first.json["problems"].size(), 2u) << first.out;
  EXPECT_EQ(Row(first.json, "19_ReLU")["run"], "suite-19_ReLU");
  EXPECT_NE(first.err.find("suite [2/2] 19_ReLU_wrong"), std::string::npos) << first.err;

  // ...continued with a third task: the two stored runs resume, the third starts.
  testing::KfResult all = RunKfoundry(Suite(dir, dir + "/tasks " + rope, "--resume"));
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.err.find("suite [1/3] 19_ReLU: resuming run suite-19_ReLU"), std::string::npos)
      << all.err;
  EXPECT_NE(all.err.find("suite [3/3] rope_llama3: starting run suite-rope_llama3"),
            std::string::npos)
      << all.err;
  EXPECT_NE(all.out.find("2 with a correct kernel"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("no_correct_kernel"), std::string::npos) << all.out;

  // Finished and resumed: nothing judged again, not the search, not the re-verification.
  testing::KfResult again = RunKfoundry(Suite(dir, dir + "/tasks " + rope, "--resume --json"));
  ASSERT_EQ(again.exit_code, 0) << again.err;
  ASSERT_TRUE(again.json.is_object()) << again.out;
  const nlohmann::json& out = again.json;
  EXPECT_EQ(out["judged_now"], 0);
  ASSERT_EQ(out["problems"].size(), 3u) << again.out;
  for (const nlohmann::json& r : out["problems"]) EXPECT_EQ(r["judged_now"], 0) << r.dump();
  const nlohmann::json& relu = Row(out, "19_ReLU");
  const nlohmann::json& wrong = Row(out, "19_ReLU_wrong");
  const nlohmann::json& kernel = Row(out, "rope_llama3");
  EXPECT_EQ(relu["kernel"], Row(first.json, "19_ReLU")["kernel"]);
  EXPECT_GT(kernel["evaluations"].get<int>(), 0);

  // The correct ReLU is timed against PyTorch eager; the library task against its baseline kernel.
  EXPECT_EQ(relu["status"], "correct") << relu.dump();
  EXPECT_EQ(relu["eager_baseline"], "torch eager");
  EXPECT_GT(relu["eager_speedup"].get<double>(), 0);
  EXPECT_TRUE(relu["compile_speedup"].is_number() || relu.contains("compile_unavailable"))
      << relu.dump();
  EXPECT_EQ(kernel["status"], "correct") << kernel.dump();
  EXPECT_EQ(kernel["eager_baseline"], "baseline kernel");
  EXPECT_TRUE(kernel["compile_speedup"].is_null());
  // A wrong kernel is no correct kernel, and counts as such.
  EXPECT_EQ(wrong["status"], "no_correct_kernel") << wrong.dump();
  EXPECT_TRUE(wrong["kernel"].is_null());
  EXPECT_EQ(out["figures"]["correct"], 2);
  ExpectFiguresMatchRows(out);

  // Its runs exist: refused without --resume, before anything runs.
  testing::KfResult twice = RunKfoundry(Suite(dir, dir + "/tasks", "--json"));
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.err.find("--resume"), std::string::npos) << twice.err;
  // A folder with no task in it is an input error too.
  fs::create_directories(dir + "/empty");
  testing::KfResult empty = RunKfoundry(Suite(dir, dir + "/empty", "--name other"));
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.err.find("neither a task folder"), std::string::npos) << empty.err;
  // So are one task twice and a --name no run can carry, both before a store is made.
  fs::create_directories(dir + "/other");
  testing::KfResult twice_task =
      RunKfoundry(Suite(dir + "/other", dir + "/tasks/relu " + dir + "/tasks/relu", ""));
  EXPECT_EQ(twice_task.exit_code, 2);
  EXPECT_NE(twice_task.err.find("a second task named 19_ReLU"), std::string::npos)
      << twice_task.err;
  testing::KfResult bad_name = RunKfoundry(Suite(dir + "/other", dir + "/tasks", "--name 'a/b'"));
  EXPECT_EQ(bad_name.exit_code, 2);
  EXPECT_NE(bad_name.err.find("--name"), std::string::npos) << bad_name.err;
  EXPECT_FALSE(fs::exists(dir + "/other/kf.db"));
}

}  // namespace
}  // namespace kf
