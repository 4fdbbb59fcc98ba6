#include "core/expr.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>

namespace kf {

void Env::Set(std::string name, double value) {
  for (auto& [n, v] : entries_) {
    if (n == name) {
      v = value;
      return;
    }
  }
  entries_.emplace_back(std::move(name), value);
}

std::optional<double> Env::Get(std::string_view name) const {
  for (const auto& [n, v] : entries_) {
    if (n == name) return v;
  }
  return std::nullopt;
}

enum class Op {
  kNumber,
  kVariable,
  kCall,
  kNeg,
  kNot,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kFloorDiv,
  kMod,
  kPow,
  kCompareChain,
  kAnd,
  kOr,
  kTernary,
};

enum class Cmp { kLt, kLe, kGt, kGe, kEq, kNe };

struct ExprNode {
  Op op;
  double number = 0;
  std::string name;  // variable or function
  int column = 0;
  std::vector<std::shared_ptr<const ExprNode>> kids;
  std::vector<Cmp> comparisons;  // for kCompareChain: kids.size() - 1 of them
};

namespace {

using NodePtr = std::shared_ptr<const ExprNode>;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  NodePtr ParseAll() {
    NodePtr node = ParseTernary();
    SkipSpace();
    if (pos_ < text_.size()) Fail(fmt::format("unexpected '{}'", text_[pos_]));
    return node;
  }

 private:
  [[noreturn]] void Fail(const std::string& message) const {
    throw ExprError(fmt::format("{} at column {} of '{}'", message, pos_ + 1, text_),
                    static_cast<int>(pos_ + 1));
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  // Consumes `token` if it comes next. Word tokens must not run into an identifier.
  bool Accept(std::string_view token) {
    SkipSpace();
    if (text_.substr(pos_, token.size()) != token) return false;
    if (std::isalpha(static_cast<unsigned char>(token[0]))) {
      size_t end = pos_ + token.size();
      if (end < text_.size() &&
          (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_')) {
        return false;
      }
    }
    pos_ += token.size();
    return true;
  }

  static NodePtr Make(Op op, int column, std::vector<NodePtr> kids) {
    auto node = std::make_shared<ExprNode>();
    node->op = op;
    node->column = column;
    node->kids = std::move(kids);
    return node;
  }

  int Column() const { return static_cast<int>(pos_ + 1); }

  // Nesting is bounded: an annotation of 20,000 '(' (a proposer's or a fuzzer's) is an error,
  // not a stack overflow.
  struct Deeper {
    explicit Deeper(const Parser& p) : parser(p) {
      if (++parser.depth_ > kMaxDepth) parser.Fail("the expression is nested too deeply");
    }
    ~Deeper() { --parser.depth_; }
    const Parser& parser;
  };
  static constexpr int kMaxDepth = 200;

  NodePtr ParseTernary() {
    Deeper deeper(*this);
    NodePtr cond = ParseOr();
    int column = Column();
    if (Accept("?")) {
      NodePtr a = ParseTernary();
      if (!Accept(":")) Fail("expected ':' in conditional");
      NodePtr b = ParseTernary();
      return Make(Op::kTernary, column, {cond, a, b});
    }
    return cond;
  }

  NodePtr ParseOr() {
    NodePtr left = ParseAnd();
    for (;;) {
      int column = Column();
      if (Accept("||") || Accept("or")) {
        left = Make(Op::kOr, column, {left, ParseAnd()});
      } else {
        return left;
      }
    }
  }

  NodePtr ParseAnd() {
    NodePtr left = ParseNot();
    for (;;) {
      int column = Column();
      if (Accept("&&") || Accept("and")) {
        left = Make(Op::kAnd, column, {left, ParseNot()});
      } else {
        return left;
      }
    }
  }

  NodePtr ParseNot() {
    int column = Column();
    SkipSpace();
    if (text_.substr(pos_, 2) != "!=" && (Accept("!") || Accept("not"))) {
      return Make(Op::kNot, column, {ParseNot()});
    }
    return ParseComparison();
  }

  std::optional<Cmp> AcceptComparison() {
    if (Accept("<=")) return Cmp::kLe;
    if (Accept(">=")) return Cmp::kGe;
    if (Accept("==")) return Cmp::kEq;
    if (Accept("!=")) return Cmp::kNe;
    if (Accept("<")) return Cmp::kLt;
    if (Accept(">")) return Cmp::kGt;
    return std::nullopt;
  }

  NodePtr ParseComparison() {
    int column = Column();
    NodePtr first = ParseAdditive();
    std::optional<Cmp> cmp = AcceptComparison();
    if (!cmp) return first;
    auto node = std::make_shared<ExprNode>();
    node->op = Op::kCompareChain;
    node->column = column;
    node->kids.push_back(first);
    while (cmp) {
      node->comparisons.push_back(*cmp);
      node->kids.push_back(ParseAdditive());
      cmp = AcceptComparison();
    }
    return node;
  }

  NodePtr ParseAdditive() {
    NodePtr left = ParseTerm();
    for (;;) {
      int column = Column();
      if (Accept("+")) {
        left = Make(Op::kAdd, column, {left, ParseTerm()});
      } else if (Accept("-")) {
        left = Make(Op::kSub, column, {left, ParseTerm()});
      } else {
        return left;
      }
    }
  }

  NodePtr ParseTerm() {
    NodePtr left = ParseUnary();
    for (;;) {
      int column = Column();
      SkipSpace();
      if (text_.substr(pos_, 2) == "**") return left;
      if (Accept("//")) {
        left = Make(Op::kFloorDiv, column, {left, ParseUnary()});
      } else if (Accept("*")) {
        left = Make(Op::kMul, column, {left, ParseUnary()});
      } else if (Accept("/")) {
        left = Make(Op::kDiv, column, {left, ParseUnary()});
      } else if (Accept("%")) {
        left = Make(Op::kMod, column, {left, ParseUnary()});
      } else {
        return left;
      }
    }
  }

  NodePtr ParseUnary() {
    Deeper deeper(*this);
    int column = Column();
    if (Accept("-")) return Make(Op::kNeg, column, {ParseUnary()});
    if (Accept("+")) return ParseUnary();
    return ParsePower();
  }

  NodePtr ParsePower() {
    NodePtr base = ParsePrimary();
    int column = Column();
    if (Accept("**")) return Make(Op::kPow, column, {base, ParseUnary()});
    return base;
  }

  NodePtr ParsePrimary() {
    SkipSpace();
    int column = Column();
    if (pos_ >= text_.size()) Fail("unexpected end of expression");
    char c = text_[pos_];
    if (Accept("(")) {
      NodePtr inner = ParseTernary();
      if (!Accept(")")) Fail("expected ')'");
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      char* end = nullptr;
      std::string copy(text_.substr(pos_, 64));  // a number's text, not the rest of the line
      double value = std::strtod(copy.c_str(), &end);
      size_t used = static_cast<size_t>(end - copy.c_str());
      if (used == 0) Fail("malformed number");
      pos_ += used;
      auto node = std::make_shared<ExprNode>();
      node->op = Op::kNumber;
      node->number = value;
      node->column = column;
      return node;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
        ++pos_;
      }
      std::string name(text_.substr(start, pos_ - start));
      if (name == "True" || name == "true") return Number(1, column);
      if (name == "False" || name == "false") return Number(0, column);
      auto node = std::make_shared<ExprNode>();
      node->name = name;
      node->column = column;
      if (Accept("(")) {
        node->op = Op::kCall;
        if (!Accept(")")) {
          do {
            node->kids.push_back(ParseTernary());
          } while (Accept(","));
          if (!Accept(")")) Fail(fmt::format("expected ')' after arguments of {}", name));
        }
      } else {
        node->op = Op::kVariable;
      }
      return node;
    }
    Fail(fmt::format("unexpected '{}'", c));
  }

  static NodePtr Number(double value, int column) {
    auto node = std::make_shared<ExprNode>();
    node->op = Op::kNumber;
    node->number = value;
    node->column = column;
    return node;
  }

  std::string_view text_;
  mutable int depth_ = 0;
  size_t pos_ = 0;
};

[[noreturn]] void EvalFail(const ExprNode& node, const std::string& text,
                           const std::string& message) {
  throw ExprError(fmt::format("{} at column {} of '{}'", message, node.column, text), node.column);
}

double Call(const ExprNode& node, const std::vector<double>& args, const std::string& text) {
  auto need = [&](size_t n) {
    if (args.size() != n) {
      EvalFail(node, text,
               fmt::format("{}() takes {} argument{}, got {}", node.name, n, n == 1 ? "" : "s",
                           args.size()));
    }
  };
  const std::string& f = node.name;
  if (f == "min" || f == "max") {
    if (args.empty()) EvalFail(node, text, f + "() needs at least one argument");
    double r = args[0];
    for (double a : args) r = f == "min" ? std::min(r, a) : std::max(r, a);
    return r;
  }
  if (f == "ceil_div") {
    need(2);
    if (args[1] == 0) EvalFail(node, text, "ceil_div by zero");
    return std::ceil(args[0] / args[1]);
  }
  if (f == "round_up") {
    need(2);
    if (args[1] == 0) EvalFail(node, text, "round_up to zero");
    return std::ceil(args[0] / args[1]) * args[1];
  }
  static const std::vector<std::pair<std::string_view, double (*)(double)>> unary = {
      {"sin", [](double x) { return std::sin(x); }},
      {"cos", [](double x) { return std::cos(x); }},
      {"exp", [](double x) { return std::exp(x); }},
      {"log", [](double x) { return std::log(x); }},
      {"log2", [](double x) { return std::log2(x); }},
      {"sqrt", [](double x) { return std::sqrt(x); }},
      {"abs", [](double x) { return std::fabs(x); }},
      {"floor", [](double x) { return std::floor(x); }},
      {"ceil", [](double x) { return std::ceil(x); }},
      {"int", [](double x) { return std::trunc(x); }},
      {"round", [](double x) { return std::nearbyint(x); }},
  };
  for (const auto& [name, fn] : unary) {
    if (f == name) {
      need(1);
      return fn(args[0]);
    }
  }
  if (f == "pow") {
    need(2);
    return std::pow(args[0], args[1]);
  }
  EvalFail(node, text, fmt::format("unknown function '{}'", f));
}

bool Compare(Cmp cmp, double a, double b) {
  switch (cmp) {
    case Cmp::kLt: return a < b;
    case Cmp::kLe: return a <= b;
    case Cmp::kGt: return a > b;
    case Cmp::kGe: return a >= b;
    case Cmp::kEq: return a == b;
    case Cmp::kNe: return a != b;
  }
  return false;
}

double EvalNode(const ExprNode& node, const Env& env, const std::string& text) {
  auto kid = [&](size_t i) { return EvalNode(*node.kids[i], env, text); };
  switch (node.op) {
    case Op::kNumber: return node.number;
    case Op::kVariable: {
      std::optional<double> v = env.Get(node.name);
      if (!v) EvalFail(node, text, fmt::format("unknown name '{}'", node.name));
      return *v;
    }
    case Op::kCall: {
      std::vector<double> args;
      args.reserve(node.kids.size());
      for (size_t i = 0; i < node.kids.size(); ++i) args.push_back(kid(i));
      return Call(node, args, text);
    }
    case Op::kNeg: return -kid(0);
    case Op::kNot: return kid(0) == 0.0 ? 1.0 : 0.0;
    case Op::kAdd: return kid(0) + kid(1);
    case Op::kSub: return kid(0) - kid(1);
    case Op::kMul: return kid(0) * kid(1);
    case Op::kDiv: {
      double b = kid(1);
      if (b == 0) EvalFail(node, text, "division by zero");
      return kid(0) / b;
    }
    case Op::kFloorDiv: {
      double b = kid(1);
      if (b == 0) EvalFail(node, text, "division by zero");
      return std::floor(kid(0) / b);
    }
    case Op::kMod: {
      double a = kid(0), b = kid(1);
      if (b == 0) EvalFail(node, text, "modulo by zero");
      double r = std::fmod(a, b);
      if (r != 0 && ((r < 0) != (b < 0))) r += b;  // Python's sign convention
      return r;
    }
    case Op::kPow: return std::pow(kid(0), kid(1));
    case Op::kCompareChain: {
      double left = kid(0);
      for (size_t i = 0; i < node.comparisons.size(); ++i) {
        double right = kid(i + 1);
        if (!Compare(node.comparisons[i], left, right)) return 0.0;
        left = right;
      }
      return 1.0;
    }
    case Op::kAnd: return (kid(0) != 0.0 && kid(1) != 0.0) ? 1.0 : 0.0;
    case Op::kOr: return (kid(0) != 0.0 || kid(1) != 0.0) ? 1.0 : 0.0;
    case Op::kTernary: return kid(0) != 0.0 ? kid(1) : kid(2);
  }
  return 0.0;
}

const ExprNode* FirstUnknown(const ExprNode& node, const std::vector<std::string>& known) {
  if (node.op == Op::kVariable && std::find(known.begin(), known.end(), node.name) == known.end())
    return &node;
  for (const auto& k : node.kids) {
    if (const ExprNode* unknown = FirstUnknown(*k, known)) return unknown;
  }
  return nullptr;
}

void CollectVariables(const ExprNode& node, std::vector<std::string>& out) {
  if (node.op == Op::kVariable) {
    bool seen = false;
    for (const auto& n : out) seen = seen || n == node.name;
    if (!seen) out.push_back(node.name);
  }
  for (const auto& k : node.kids) CollectVariables(*k, out);
}

std::string PythonNumber(double v) {
  if (std::isinf(v)) return v > 0 ? "float('inf')" : "float('-inf')";
  if (v == std::floor(v) && std::fabs(v) < 9.0e15)
    return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{}", v);  // the shortest text that reads back as v, which Python reads too
}

std::string_view CmpText(Cmp cmp) {
  switch (cmp) {
    case Cmp::kLt: return "<";
    case Cmp::kLe: return "<=";
    case Cmp::kGt: return ">";
    case Cmp::kGe: return ">=";
    case Cmp::kEq: return "==";
    case Cmp::kNe: return "!=";
  }
  return "==";
}

std::string PythonNode(const ExprNode& node, std::string_view names) {
  auto kid = [&](size_t i) { return PythonNode(*node.kids[i], names); };
  auto binary = [&](std::string_view op) { return fmt::format("({} {} {})", kid(0), op, kid(1)); };
  switch (node.op) {
    case Op::kNumber: return PythonNumber(node.number);
    case Op::kVariable: return fmt::format("{}[\"{}\"]", names, node.name);
    case Op::kCall: {
      std::string args;
      for (size_t i = 0; i < node.kids.size(); ++i) args += (i ? ", " : "") + kid(i);
      return fmt::format("_kf_{}({})", node.name, args);
    }
    case Op::kNeg: return fmt::format("(-{})", kid(0));
    case Op::kNot: return fmt::format("(0 if {} else 1)", kid(0));
    case Op::kAdd: return binary("+");
    case Op::kSub: return binary("-");
    case Op::kMul: return binary("*");
    case Op::kDiv: return binary("/");
    case Op::kFloorDiv: return binary("//");
    case Op::kMod: return binary("%");
    case Op::kPow: return binary("**");
    case Op::kCompareChain: {  // Python chains comparisons as Eval does
      std::string chain = kid(0);
      for (size_t i = 0; i < node.comparisons.size(); ++i)
        chain += fmt::format(" {} {}", CmpText(node.comparisons[i]), kid(i + 1));
      return fmt::format("(1 if {} else 0)", chain);
    }
    case Op::kAnd: return fmt::format("(1 if {} and {} else 0)", kid(0), kid(1));
    case Op::kOr: return fmt::format("(1 if {} or {} else 0)", kid(0), kid(1));
    case Op::kTernary: return fmt::format("({} if {} else {})", kid(1), kid(0), kid(2));
  }
  return "0";
}

}  // namespace

Expr::Expr() = default;
Expr::~Expr() = default;
Expr::Expr(const Expr&) = default;
Expr& Expr::operator=(const Expr&) = default;
Expr::Expr(Expr&&) noexcept = default;
Expr& Expr::operator=(Expr&&) noexcept = default;

Expr Expr::Parse(std::string_view text) {
  Expr e;
  e.text_ = std::string(text);
  Parser parser(e.text_);
  e.root_ = parser.ParseAll();
  return e;
}

double Expr::Eval(const Env& env) const {
  if (!root_) throw ExprError("empty expression", 0);
  return EvalNode(*root_, env, text_);
}

int64_t Expr::EvalInt(const Env& env) const {
  double v = Eval(env);
  if (!std::isfinite(v) || v != std::floor(v) || std::fabs(v) > 9.0e15) {
    throw ExprError(
        fmt::format("'{}' = {} is not an integer (use // for integer division)", text_, v), 0);
  }
  return static_cast<int64_t>(v);
}

void Expr::RequireNames(const std::vector<std::string>& known) const {
  if (!root_) return;
  if (const ExprNode* unknown = FirstUnknown(*root_, known))
    EvalFail(*unknown, text_, fmt::format("unknown name '{}'", unknown->name));
}

std::string Expr::ToPython(std::string_view names) const {
  if (!root_) throw ExprError("empty expression", 0);
  return PythonNode(*root_, names);
}

std::vector<std::string> Expr::Variables() const {
  std::vector<std::string> out;
  if (root_) CollectVariables(*root_, out);
  return out;
}

}  // namespace kf
