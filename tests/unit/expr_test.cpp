#include "core/expr.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace kf {
namespace {

double Eval(const char* text, const Env& env = Env()) {
  return Expr::Parse(text).Eval(env);
}

TEST(Expr, ArithmeticAndPrecedence) {
  EXPECT_EQ(Eval("1 + 2 * 3"), 7);
  EXPECT_EQ(Eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(Eval("2 ** 3 ** 2"), 512);  // right-associative
  EXPECT_EQ(Eval("-2 ** 2"), -4);       // as in Python
  EXPECT_EQ(Eval("10 - 4 - 3"), 3);
}

TEST(Expr, PythonDivisionSemantics) {
  EXPECT_DOUBLE_EQ(Eval("7 / 2"), 3.5);
  EXPECT_EQ(Eval("7 // 2"), 3);
  EXPECT_EQ(Eval("-7 // 2"), -4);
  EXPECT_EQ(Eval("-7 % 3"), 2);
  EXPECT_EQ(Eval("7 % -3"), -2);
}

TEST(Expr, ComparisonsChainAndLogic) {
  EXPECT_EQ(Eval("1 < 2 < 3"), 1);
  EXPECT_EQ(Eval("1 < 3 < 2"), 0);
  EXPECT_EQ(Eval("3 > 2 == 2"), 1);  // (3 > 2) and (2 == 2)
  EXPECT_EQ(Eval("1 and 0 or 1"), 1);
  EXPECT_EQ(Eval("not 1 or 0"), 0);
  EXPECT_EQ(Eval("1 && !0"), 1);
  EXPECT_EQ(Eval("0 || 1 != 1"), 0);
  EXPECT_EQ(Eval("1 ? 5 : 6"), 5);
  EXPECT_EQ(Eval("True and not False"), 1);
}

TEST(Expr, VariablesAndFunctions) {
  Env env;
  env.Set("BLOCK", 128);
  env.Set("N", 1000);
  EXPECT_EQ(Eval("ceil_div(N, BLOCK)", env), 8);
  EXPECT_EQ(Eval("round_up(N, BLOCK)", env), 1024);
  EXPECT_EQ(Eval("min(N, BLOCK, 7)", env), 7);
  EXPECT_EQ(Eval("max(N, BLOCK)", env), 1000);
  EXPECT_NEAR(Eval("cos(0) + sin(0) + sqrt(16) + pow(2, 10)"), 1 + 0 + 4 + 1024, 1e-12);
  EXPECT_EQ(Expr::Parse("ceil_div(N, BLOCK) * TILE").Variables(),
            (std::vector<std::string>{"N", "BLOCK", "TILE"}));
  env.Set("N", 5);  // Set replaces
  EXPECT_EQ(Eval("N", env), 5);
}

TEST(Expr, RequireNamesNamesTheFirstUnknownNameAndItsColumn) {
  Expr e = Expr::Parse("ceil_div(T * HH, BLOCK)");
  EXPECT_NO_THROW(e.RequireNames({"T", "HH", "BLOCK"}));
  try {
    e.RequireNames({"T", "H", "BLOCK"});
    FAIL() << "no error";
  } catch (const ExprError& error) {
    EXPECT_STREQ(error.what(), "unknown name 'HH' at column 14 of 'ceil_div(T * HH, BLOCK)'");
    EXPECT_EQ(error.column(), 14);
  }
  EXPECT_NO_THROW(Expr::Parse("max(N, 1) + round_up(N, 4)").RequireNames({"N"}))
      << "function names are not names to bind";
}

TEST(Expr, EvalIntRejectsFractions) {
  Env env;
  env.Set("D", 77);
  EXPECT_EQ(Expr::Parse("D // 2").EvalInt(env), 38);
  EXPECT_THROW(Expr::Parse("D / 2").EvalInt(env), ExprError);
}

TEST(Expr, ErrorsNamePosition) {
  try {
    Expr::Parse("1 + * 2");
    FAIL() << "no error";
  } catch (const ExprError& e) {
    EXPECT_EQ(e.column(), 5);
    EXPECT_NE(std::string(e.what()).find("column 5"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Expr::Parse("(1 + 2"), ExprError);
  EXPECT_THROW(Expr::Parse("1 2"), ExprError);
  EXPECT_THROW(Expr::Parse(""), ExprError);
  try {
    Eval("X + 1");
    FAIL() << "no error";
  } catch (const ExprError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown name 'X'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Eval("1 / 0"), ExprError);
  EXPECT_THROW(Eval("frobnicate(1)"), ExprError);
  EXPECT_THROW(Eval("pow(1)"), ExprError);
}

TEST(Expr, WordOperatorsNeedWordBoundaries) {
  Env env;
  env.Set("order", 3);
  env.Set("android", 4);
  EXPECT_EQ(Eval("order + android", env), 7);
}

TEST(Expr, DeepNestingIsAnErrorNotAStackOverflow) {
  // Found by the parsers' fuzzer: 20,000 nested parentheses or minus signs overflowed the stack.
  std::string parens = std::string(20000, '(') + "1" + std::string(20000, ')');
  EXPECT_THROW(Expr::Parse(parens), ExprError);
  EXPECT_THROW(Expr::Parse(std::string(200000, '-') + "1"), ExprError);
  EXPECT_EQ(Expr::Parse(std::string(50, '(') + "2" + std::string(50, ')')).Eval(Env{}), 2);
}

// The Python translation (what `kfoundry export --torch` writes launch rules, shapes and scalar
// values as) reads names from a dict and calls the runtime's functions, parenthesised.
TEST(ExprToPython, SpellsNamesFunctionsAndCSpellingsInPython) {
  EXPECT_EQ(Expr::Parse("ceil_div(N, BLOCK)").ToPython(), "_kf_ceil_div(v[\"N\"], v[\"BLOCK\"])");
  EXPECT_EQ(Expr::Parse("a > 0 ? a : -a").ToPython("s"),
            "(s[\"a\"] if (1 if s[\"a\"] > 0 else 0) else (-s[\"a\"]))");
  EXPECT_EQ(Expr::Parse("!x && y || z").ToPython(),
            "(1 if (1 if (0 if v[\"x\"] else 1) and v[\"y\"] else 0) or v[\"z\"] else 0)");
  EXPECT_EQ(Expr::Parse("1 <= X < 8").ToPython(), "(1 if 1 <= v[\"X\"] < 8 else 0)");
  EXPECT_EQ(Expr::Parse("-2 ** 2").ToPython(), "(-(2 ** 2))");
  EXPECT_EQ(Expr::Parse("0.5 * D // 2").ToPython(), "((0.5 * v[\"D\"]) // 2)");
}

// Every translated expression computes in Python what Eval computes here, errors included,
// through the runtime's own functions (src/torch/export_expr.py, which the export embeds). Needs
// python3; skipped without it.
TEST(ExprToPython, PythonComputesWhatEvalComputes) {
  if (std::system("python3 -c '' >/dev/null 2>&1") != 0) GTEST_SKIP() << "no python3";
  const std::vector<std::string> exprs = {
      "ceil_div(N, BLOCK)",
      "ceil_div(N + 1, 7) * 7",
      "round_up(N, BLOCK)",
      "round_up(77, 32) // 32",
      "min(N)",
      "min(N, BLOCK, 3)",
      "max(N, BLOCK) - min(4, N)",
      "N > 64 ? BLOCK : 32",
      "N > 64 ? N < 100 ? 1 : 2 : 3",
      "(N > 64 && BLOCK == 128) * 5",
      "N < 0 || BLOCK > 100",
      "!N + 3",
      "not (N == 77) + 1",
      "N != 77",
      "1 <= N < 100",
      "1 <= N < 50",
      "N / 2",
      "N // 2",
      "-N // 2",
      "-N % 5",
      "N % -5",
      "2 ** -1",
      "-2 ** 2",
      "2 ** 3 ** 2",
      "int(N / 2)",
      "round(2.5) + round(3.5)",
      "floor(-N / 2)",
      "ceil(N / 3)",
      "abs(-N)",
      "sqrt(N) * 2",
      "log2(BLOCK)",
      "pow(2, 10)",
      "exp(0) + log(1)",
      "N and 0",
      "0 or N",
      "(N or 0) * 2",
      "1e-5 * sqrt(N)",
      "true + True + false",
      "N / (BLOCK - 128)",
      "ceil_div(N, BLOCK - 128)",
      "BLOCK // 0",
      "N % 0",
  };
  Env env;
  env.Set("N", 77);
  env.Set("BLOCK", 128);
  const std::string dir = fmt::format("/tmp/kf_expr_py.{}", getpid());
  std::system(("mkdir -p " + dir).c_str());
  {
    std::ofstream script(dir + "/check.py");
    script << "exec(open(" << '"' << KF_TEST_DATA << "/../../src/torch/export_expr.py" << '"'
           << ").read())\n"
           << "v = {'N': 77, 'BLOCK': 128}\n";
    for (const std::string& e : exprs) {
      script << "try:\n    print(repr(float(" << Expr::Parse(e).ToPython() << ")))\n"
             << "except (ZeroDivisionError, ValueError):\n    print('error')\n";
    }
  }
  FILE* pipe = popen(("python3 " + dir + "/check.py 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), pipe)) > 0;) out.append(buf, n);
  ASSERT_EQ(pclose(pipe), 0) << out;
  std::system(("rm -rf " + dir).c_str());
  std::istringstream lines(out);
  for (const std::string& e : exprs) {
    std::string line;
    ASSERT_TRUE(std::getline(lines, line)) << "no answer for " << e << "\n" << out;
    std::string want;
    try {
      want = fmt::format("{}", Expr::Parse(e).Eval(env));
    } catch (const ExprError&) {
      want = "error";
    }
    if (want == "error" || line == "error") {
      EXPECT_EQ(line, want) << e << " -> " << Expr::Parse(e).ToPython();
    } else {
      EXPECT_DOUBLE_EQ(std::stod(line), std::stod(want))
          << e << " -> " << Expr::Parse(e).ToPython();
    }
  }
}

}  // namespace
}  // namespace kf
