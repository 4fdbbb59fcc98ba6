#pragma once
// Arithmetic expressions used everywhere a task or kernel file computes a number: buffer shapes,
// launch grids, scalar arguments, cost formulas, input tables and parameter constraints.
// Python semantics (`/` is real division, `//` floors, chained comparisons, and/or/not) with C
// spellings accepted too (&&, ||, !, ?:). Parse once, evaluate many times.

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kf {

// Thrown for a malformed expression or one that cannot be evaluated (unknown name, division by
// zero). `column` is 1-based within the expression text, 0 when not tied to a position.
class ExprError : public std::runtime_error {
 public:
  ExprError(const std::string& message, int column)
      : std::runtime_error(message), column_(column) {}
  int column() const { return column_; }

 private:
  int column_;
};

// Name → value bindings, searched linearly (environments hold a handful of names).
class Env {
 public:
  Env() = default;
  void Set(std::string name, double value);
  std::optional<double> Get(std::string_view name) const;
  const std::vector<std::pair<std::string, double>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, double>> entries_;
};

struct ExprNode;

class Expr {
 public:
  // Parses `text`; throws ExprError on a syntax error.
  static Expr Parse(std::string_view text);

  Expr();
  ~Expr();
  Expr(const Expr&);
  Expr& operator=(const Expr&);
  Expr(Expr&&) noexcept;
  Expr& operator=(Expr&&) noexcept;

  double Eval(const Env& env) const;
  // Evaluates and requires an integral result (shapes, grids); throws ExprError otherwise.
  int64_t EvalInt(const Env& env) const;
  bool EvalBool(const Env& env) const { return Eval(env) != 0.0; }

  const std::string& text() const { return text_; }
  // Names the expression reads, excluding function names.
  std::vector<std::string> Variables() const;
  // Throws ExprError ("unknown name 'X' at column C of '...'", as Eval would) for the first name
  // the expression reads that `known` lacks.
  void RequireNames(const std::vector<std::string>& known) const;
  // The expression as Python source that computes what Eval computes: a name X reads
  // `names["X"]`, a function f calls `_kf_f` (which the caller defines: the exported module's
  // runtime, src/torch/export_runtime.py), truth values are 1 or 0, and every operation is
  // parenthesised, so no precedence question arises.
  std::string ToPython(std::string_view names = "v") const;

 private:
  std::string text_;
  std::shared_ptr<const ExprNode> root_;  // immutable, so copies may share it
};

}  // namespace kf
