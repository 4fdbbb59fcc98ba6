#pragma once
// What the torch-reference integration tests share (cli_import_test.cpp, kernelbench_test.cpp,
// cli_suite_test.cpp, cli_export_test.cpp):
// whether kfoundry will find PyTorch, importing one of the KernelBench problems under
// tests/data/kernelbench, and `kfoundry eval ... --json` of a kernel against the imported task.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/task.hpp"
#include "kf_process.hpp"

namespace kf::testing {

inline const std::string kProblems = std::string(KF_TEST_DATA) + "/kernelbench";

// The first of kfoundry's interpreters (KF_PYTHON, else python3, then /usr/bin/python3) that
// imports `modules` ("torch", "torch, pyopencl"), or "".
inline std::string FirstPythonWith(const std::string& modules) {
  std::vector<std::string> pythons = {"python3", "/usr/bin/python3"};
  if (const char* env = std::getenv("KF_PYTHON"); env && *env) pythons = {env};
  for (const std::string& p : pythons) {
    if (std::system(fmt::format("{} -c 'import {}' >/dev/null 2>&1", p, modules).c_str()) == 0)
      return p;
  }
  return "";
}

// Whether kfoundry will find a python3 with PyTorch.
inline bool HaveTorch() {
  static const bool have = !FirstPythonWith("torch").empty();
  return have;
}

#define REQUIRE_TORCH()                                               \
  if (!::kf::testing::HaveTorch())                                    \
  GTEST_SKIP() << "no python3 with PyTorch (Debian: python3-torch); " \
                  "kfoundry import needs it"

#define REQUIRE_TORCH_AND_OPENCL() \
  REQUIRE_TORCH();                 \
  if (!::kf::testing::HasBackend("opencl")) GTEST_SKIP() << "no OpenCL device (PoCL)"

// `kfoundry import` of tests/data/kernelbench/PROBLEM.py into DIR/task, loaded back.
inline Task ImportKernelBench(const std::string& problem, const std::string& dir) {
  KfResult r = RunKfoundry(fmt::format("import {}/{}.py -o {}", kProblems, problem, dir + "/task"));
  EXPECT_EQ(r.exit_code, 0) << problem << ": " << r.err;
  return LoadTask(dir + "/task");
}

// `kfoundry eval TASK KERNEL --device DEVICE --json`, quick settings; the answer parsed (null when
// the output is not JSON).
inline nlohmann::json EvalJson(const std::string& task, const std::string& kernel, KfResult* result,
                               const std::string& env = "", const std::string& device = "opencl") {
  *result = RunKfoundry(
      fmt::format("eval {} {} --device {} --json --runs 10 --warmup 1", task, kernel, device), env);
  return nlohmann::json::parse(result->out, nullptr, false);
}

}  // namespace kf::testing
