#include "core/expr.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace kf
