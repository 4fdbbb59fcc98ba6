// The exported module's string literals (src/torch/export_module.hpp): a kernel or problem source
// is written raw and triple-quoted where that reads back exactly, else escaped; either way Python
// reads back the very text. Needs python3; skipped without it.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "torch/export_module.hpp"

namespace kf {
namespace {

TEST(TorchExport, StringLiteralsAreRawWhereTheyCanBe) {
  EXPECT_EQ(PythonStringLiteral("a\\nb \"q\"\n"), "r'''a\\nb \"q\"\n'''");
  EXPECT_EQ(PythonStringLiteral("x = '''y'''"), "\"x = '''y'''\"");
  EXPECT_EQ(PythonStringLiteral("ends in \\"), "\"ends in \\\\\"");
}

TEST(TorchExport, PythonReadsBackTheText) {
  if (std::system("python3 -c '' >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3";
  const std::vector<std::string> texts = {"#define X(a) \\\n  (a)\nkernel void k() {}\n",
                                          "it's '''here'''",
                                          "ends in \\",
                                          "ends in '",
                                          "tab\tand \"quotes\" and \\n",
                                          "caf\xc3\xa9\r\n"};
  const std::string dir = fmt::format("/tmp/kf_literal_py.{}", getpid());
  std::system(("mkdir -p " + dir).c_str());
  std::string expected;
  {
    std::ofstream script(dir + "/check.py");
    script << "import sys\n";
    for (size_t i = 0; i < texts.size(); ++i) {
      std::ofstream(fmt::format("{}/{}.txt", dir, i), std::ios::binary) << texts[i];
      script << fmt::format("print(open('{}/{}.txt', newline='').read() == {})\n", dir, i,
                            PythonStringLiteral(texts[i]));
      expected += "True\n";
    }
  }
  FILE* pipe = popen(("python3 " + dir + "/check.py 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), pipe)) > 0;) out.append(buf, n);
  EXPECT_EQ(pclose(pipe), 0) << out;
  std::system(("rm -rf " + dir).c_str());
  EXPECT_EQ(out, expected);
}

}  // namespace
}  // namespace kf
