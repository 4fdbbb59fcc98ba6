#include "core/task.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "core/identity.hpp"
#include "core/input_error.hpp"
#include "core/task_library.hpp"
#include "core/task_reader.hpp"
#include "core/task_variant.hpp"
#include "core/toml_file.hpp"

namespace kf {

namespace {

using task_reader::ClosestName;
using task_reader::Contains;
using task_reader::IsIdentifier;
using task_reader::Joined;
using task_reader::kMaxExprLength;
using task_reader::Names;
using task_reader::TaskReader;

// Sizes and integer scalars stay below this, so a double holds them exactly (as Expr::EvalInt).
constexpr double kMaxExactInteger = 9.0e15;

// Why `v` cannot be passed as a scalar kernel argument of type `t`, or "" when it can.
std::string ScalarProblem(double v, DType t) {
  if (!std::isfinite(v)) return "is not a finite number";
  bool integral = v == std::floor(v);
  switch (t) {
    case DType::kI32:
      if (!integral) return "is not an integer (use // for integer division)";
      if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
        return "does not fit an i32";
      return "";
    case DType::kI64:
      if (!integral) return "is not an integer (use // for integer division)";
      if (std::fabs(v) > kMaxExactInteger) return "is beyond the i64 scalars taken (|v| <= 9e15)";
      return "";
    case DType::kF32:
      if (std::fabs(v) > std::numeric_limits<float>::max()) return "does not fit an f32";
      return "";
    default: return "";
  }
}

Names ParseNames(const TaskReader& r, const toml::table& root) {
  Names names;
  const toml::node* sizes = r.Require(root, "sizes", "sizes");
  if (!sizes->is_array() || sizes->as_array()->empty())
    r.Fail(sizes, "sizes", "expected an array of size names");
  for (const auto& s : *sizes->as_array()) {
    if (!s.is_string()) r.Fail(&s, "sizes", "expected strings");
    std::string name(s.as_string()->get());
    if (!IsIdentifier(name))
      r.Fail(&s, "sizes", "'" + name + "' is not a name (letters, digits and _)");
    if (Contains(names.sizes, name)) r.Fail(&s, "sizes", "'" + name + "' declared twice");
    names.sizes.push_back(name);
  }
  const toml::node* settings = root.get("settings");
  if (!settings) return names;
  const toml::table* t = settings->as_table();
  if (!t) r.Fail(settings, "settings", "expected a table of name = default value");
  for (const auto& [k, v] : *t) {
    std::string name(k.str()), field = "settings." + name;
    if (!IsIdentifier(name)) r.Fail(&v, field, "not a name (letters, digits and _)");
    if (Contains(names.sizes, name)) r.Fail(&v, field, "already a size; a setting is another name");
    names.settings.push_back(name);
    names.setting_defaults[name] = r.NumberOf(v, field);
  }
  return names;
}

ArgRole ParseRole(const TaskReader& r, const toml::node* n, const std::string& field) {
  if (!n->is_string()) r.Fail(n, field, "expected \"in\", \"out\" or \"inout\"");
  std::string s(n->as_string()->get());
  if (s == "in") return ArgRole::kIn;
  if (s == "out") return ArgRole::kOut;
  if (s == "inout") return ArgRole::kInOut;
  r.Fail(n, field, "expected \"in\", \"out\" or \"inout\", got \"" + s + "\"");
}

bool IsCsr(const InitSpec& init) {
  return init.kind == InitSpec::Kind::kCsrRowPtr || init.kind == InitSpec::Kind::kCsrColIdx;
}

InitSpec ParseInit(const TaskReader& r, const toml::node* n, const std::string& field,
                   const Names& names) {
  InitSpec init;
  const toml::table* t = n->as_table();
  if (!t) r.Fail(n, field, "expected a table such as { dist = \"normal\", mean = 0, std = 1 }");
  // With a known `dist`, its own keys are checked below (and suggested from). Otherwise keys of
  // no generator first (a misspelled `dist` is not "missing").
  static const std::vector<std::string> kDists = {
      "normal", "uniform", "constant", "formula", "csr_row_ptr", "csr_col_idx", "randint"};
  const toml::node* d = t->get("dist");
  if (!d || !d->is_string() || !Contains(kDists, std::string(d->as_string()->get()))) {
    r.CheckKeys(*t,
                {"dist", "mean", "std", "low", "high", "value", "index", "rows", "cols", "nnz",
                 "seed", "skew"},
                field + ".");
  }
  std::string dist = r.String(*t, "dist", field + ".dist");
  if (dist == "normal") {
    r.CheckKeys(*t, {"dist", "mean", "std"}, field + ".");
    init.kind = InitSpec::Kind::kNormal;
    init.a = r.Number(*t, "mean", field + ".mean", 0.0);
    init.b = r.Number(*t, "std", field + ".std", 1.0);
    if (init.b <= 0) r.Fail(n, field + ".std", "must be positive");
  } else if (dist == "uniform") {
    r.CheckKeys(*t, {"dist", "low", "high"}, field + ".");
    init.kind = InitSpec::Kind::kUniform;
    init.a = r.Number(*t, "low", field + ".low", -1.0);
    init.b = r.Number(*t, "high", field + ".high", 1.0);
    if (init.b <= init.a) r.Fail(n, field + ".high", "must be above low");
  } else if (dist == "randint") {
    r.CheckKeys(*t, {"dist", "low", "high"}, field + ".");
    init.kind = InitSpec::Kind::kRandInt;
    init.low = t->get("low") ? r.ExprOf(t->get("low"), field + ".low") : Expr::Parse("0");
    if (t->get("low")) r.CheckNames(init.low, names.All(), names, t->get("low"), field + ".low");
    const toml::node* high = r.Require(*t, "high", field + ".high");
    init.high = r.ExprOf(high, field + ".high");
    r.CheckNames(init.high, names.All(), names, high, field + ".high");
  } else if (dist == "constant") {
    r.CheckKeys(*t, {"dist", "value"}, field + ".");
    init.kind = InitSpec::Kind::kConstant;
    init.a = r.Number(*t, "value", field + ".value", 0.0);
  } else if (dist == "formula") {
    r.CheckKeys(*t, {"dist", "index", "value"}, field + ".");
    init.kind = InitSpec::Kind::kFormula;
    const toml::node* idx = r.Require(*t, "index", field + ".index");
    const toml::array* arr = idx->as_array();
    if (!arr) r.Fail(idx, field + ".index", "expected an array of index names, one per dimension");
    std::vector<std::string> allowed = names.All();
    for (const auto& e : *arr) {
      if (!e.is_string()) r.Fail(&e, field + ".index", "expected strings");
      std::string name(e.as_string()->get());
      if (!IsIdentifier(name)) r.Fail(&e, field + ".index", "'" + name + "' is not a name");
      if (Contains(allowed, name))
        r.Fail(&e, field + ".index", "'" + name + "' hides a size, setting or another index");
      allowed.push_back(name);
      init.index.push_back(name);
    }
    const toml::node* v = r.Require(*t, "value", field + ".value");
    init.formula = r.ExprOf(v, field + ".value");
    r.CheckNames(init.formula, allowed, names, v, field + ".value");
  } else if (dist == "csr_row_ptr" || dist == "csr_col_idx") {
    r.CheckKeys(*t, {"dist", "rows", "cols", "nnz", "seed", "skew"}, field + ".");
    init.kind = dist == "csr_row_ptr" ? InitSpec::Kind::kCsrRowPtr : InitSpec::Kind::kCsrColIdx;
    for (auto [key, e] :
         {std::pair{"rows", &init.rows}, {"cols", &init.cols}, {"nnz", &init.nnz}}) {
      const toml::node* v = r.Require(*t, key, field + "." + key);
      *e = r.ExprOf(v, field + "." + key);
      r.CheckNames(*e, names.sizes, names, v, field + "." + key);
    }
    double seed = r.Number(*t, "seed", field + ".seed", 0.0);
    if (seed < 0 || seed > kMaxExactInteger || seed != std::floor(seed))
      r.Fail(t->get("seed"), field + ".seed", "expected a non-negative integer");
    init.seed = static_cast<uint64_t>(seed);
    init.skew = r.Number(*t, "skew", field + ".skew", 0.0);
    if (init.skew < 0 || init.skew > 4)
      r.Fail(t->get("skew"), field + ".skew", "expected a number from 0 (rows alike) to 4");
  } else {
    r.Fail(t->get("dist"), field + ".dist",
           "expected normal, uniform, randint, constant, formula, csr_row_ptr or csr_col_idx, "
           "got \"" +
               dist + "\"");
  }
  return init;
}

SizeSet ParseSizeSet(const TaskReader& r, const toml::table& t, const std::string& field,
                     const Names& names, bool bench) {
  std::vector<std::string> known = {"name"};
  if (bench) known.push_back("device_class");
  std::vector<std::string> all = names.All();
  known.insert(known.end(), all.begin(), all.end());
  r.CheckKeys(t, known, field + ".");
  SizeSet set;
  set.name = r.String(t, "name", field + ".name");
  if (bench) {
    set.device_class = r.String(t, "device_class", field + ".device_class", "");
    const std::vector<std::string> classes = {"gpu", "cpu", "other"};
    if (!set.device_class.empty() && !Contains(classes, set.device_class)) {
      std::string close = ClosestName(set.device_class, classes);
      r.Fail(t.get("device_class"), field + ".device_class",
             "expected gpu, cpu or other, got \"" + set.device_class + "\"" +
                 (close.empty() ? "" : "; did you mean '" + close + "'?"));
    }
  }
  for (const auto& s : names.sizes) {
    const toml::node* v = t.get(s);
    if (!v) r.Fail(&t, field + "." + s, "missing (every size set gives every size)");
    if (!v->is_integer() || v->as_integer()->get() <= 0 ||
        static_cast<double>(v->as_integer()->get()) > kMaxExactInteger)
      r.Fail(v, field + "." + s, "expected a positive integer (at most 9e15)");
    set.sizes[s] = static_cast<double>(v->as_integer()->get());
  }
  for (const auto& [name, fallback] : names.setting_defaults)
    set.sizes[name] = r.Number(t, name, field + "." + name, fallback);
  return set;
}

std::vector<SizeSet> ParseSizeSets(const TaskReader& r, const toml::table& root,
                                   const std::string& key, const Names& names, bool bench) {
  std::vector<SizeSet> sets;
  const toml::node* n = r.Require(root, key, key);
  const toml::array* arr = n->as_array();
  if (!arr || arr->empty()) r.Fail(n, key, "expected one or more [[" + key + "]] tables");
  for (size_t i = 0; i < arr->size(); ++i) {
    const toml::table* t = arr->get(i)->as_table();
    std::string field = fmt::format("{}[{}]", key, i);
    if (!t) r.Fail(arr->get(i), field, "expected a table");
    SizeSet set = ParseSizeSet(r, *t, field, names, bench);
    for (const SizeSet& other : sets) {
      if (other.name == set.name)
        r.Fail(t->get("name"), field + ".name", "a set named '" + set.name + "' comes before");
    }
    sets.push_back(std::move(set));
  }
  return sets;
}

// Buffer keys: shape, role, init (inputs); scalar keys: value. Keys of the other kind are errors.
void ParseBuffer(const TaskReader& r, const toml::table& t, const std::string& field,
                 const Names& names, ArgSpec& a) {
  a.is_buffer = true;
  const toml::node* shape = t.get("shape");
  if (!shape->is_array() || shape->as_array()->empty())
    r.Fail(shape, field + ".shape", "expected an array of dimension expressions");
  for (const auto& d : *shape->as_array()) {
    a.shape.push_back(r.ExprOf(&d, field + ".shape"));
    r.CheckNames(a.shape.back(), names.sizes, names, &d, field + ".shape");
  }
  if (const toml::node* v = t.get("value"))
    r.Fail(v, field + ".value", "a buffer has no value (a scalar is an argument without a shape)");
  a.role = ParseRole(r, r.Require(t, "role", field + ".role"), field + ".role");
  const toml::node* init = t.get("init");
  if (a.role == ArgRole::kOut) {
    if (init) r.Fail(init, field + ".init", "an output (role \"out\") has no generator");
    return;
  }
  if (!init) {
    r.Fail(&t, field + ".init",
           "missing: an input (role \"in\" or \"inout\") needs a generator such as "
           "init = { dist = \"normal\", mean = 0.0, std = 1.0 }");
  }
  a.init = ParseInit(r, init, field + ".init", names);
  if (a.init.kind == InitSpec::Kind::kFormula && a.init.index.size() != a.shape.size())
    r.Fail(init, field + ".init.index", "needs one index name per shape dimension");
  if (a.init.kind == InitSpec::Kind::kRandInt && a.dtype != DType::kI32 && a.dtype != DType::kI64 &&
      a.dtype != DType::kU8)
    r.Fail(t.get("type"), field + ".type", "a randint input is an integer type (i32, i64, u8)");
  if (IsCsr(a.init)) {
    if (a.dtype != DType::kI32 && a.dtype != DType::kI64)
      r.Fail(t.get("type"), field + ".type", "a CSR index buffer is i32 or i64");
    if (a.role != ArgRole::kIn)
      r.Fail(t.get("role"), field + ".role", "a CSR index buffer is an input (role \"in\")");
    if (a.shape.size() != 1)
      r.Fail(t.get("shape"), field + ".shape", "a CSR index buffer has one dimension");
  }
}

void ParseScalar(const TaskReader& r, const toml::table& t, const std::string& field,
                 const Names& names, ArgSpec& a) {
  a.is_buffer = false;
  for (const char* key : {"role", "init"}) {
    if (const toml::node* n = t.get(key))
      r.Fail(n, field + "." + key,
             "a scalar (an argument without a shape) takes no " + std::string(key));
  }
  // The evaluator passes scalars as i32, i64, f32 or f64 (KernelArg): nothing 16 or 8 bits wide.
  if (a.dtype == DType::kF16 || a.dtype == DType::kBF16) {
    r.Fail(
        t.get("type"), field + ".type",
        fmt::format("{} scalar cannot be a kernel argument: OpenCL 1.2 takes no half or "
                    "bfloat16 argument, and the evaluator passes scalars as i32, i64, f32 or f64 "
                    "only; declare it f32 and convert in the kernel",
                    a.dtype == DType::kF16 ? "an f16" : "a bf16"));
  }
  if (a.dtype == DType::kU8) {
    r.Fail(t.get("type"), field + ".type",
           "a u8 scalar cannot be a kernel argument: the evaluator passes scalars as i32, i64, "
           "f32 or f64 only (OpenCL would get 4 bytes for a 1-byte uchar); declare it i32");
  }
  const toml::node* v = t.get("value");
  if (!v)
    r.Fail(&t, field + ".value",
           "a scalar argument needs a value expression (or give a shape to make it a buffer)");
  a.value = r.ExprOf(v, field + ".value");
  r.CheckNames(a.value, names.All(), names, v, field + ".value");
}

ArgSpec ParseArg(const TaskReader& r, const toml::table& t, size_t i, const Names& names) {
  ArgSpec a;
  a.line = TaskReader::LineOf(&t);
  std::string field = fmt::format("args[{}]", i);
  if (const toml::node* n = t.get("name"); n && n->is_string())
    field = "args." + std::string(n->as_string()->get());
  r.CheckKeys(t, {"name", "type", "shape", "role", "init", "value"}, field + ".");
  a.name = r.String(t, "name", field + ".name");
  if (!IsIdentifier(a.name))
    r.Fail(t.get("name"), field + ".name",
           "expected the kernel parameter's name (letters, digits, _)");
  std::string type = r.String(t, "type", field + ".type");
  std::optional<DType> dtype = ParseDType(type);
  if (!dtype)
    r.Fail(t.get("type"), field + ".type",
           "unknown type '" + type + "' (f16, bf16, f32, f64, i32, i64, u8)");
  a.dtype = *dtype;
  if (t.get("shape")) {
    ParseBuffer(r, t, field, names, a);
  } else {
    ParseScalar(r, t, field, names, a);
  }
  return a;
}

// Every shape must be positive integers, and every scalar a value its type holds, at every set.
// A CSR part at one size set: rows, cols and nnz positive integers, nnz <= rows * cols, indices
// that fit the type, and the buffer as long as its part (rows + 1 offsets, or nnz indices).
void CheckCsrAtSet(const TaskReader& r, const toml::table& t, const ArgSpec& a, int64_t count,
                   const SizeSet& set, const Env& env) {
  const std::string field = "args." + a.name + ".init";
  const toml::node* init = t.get("init");
  const toml::table& it = *init->as_table();
  auto value = [&](const Expr& e, const char* key) {
    int64_t v = e.EvalInt(env);
    if (v <= 0)
      r.Fail(it.get(key), field + "." + key,
             fmt::format("at size set '{}': '{}' = {}, not positive", set.name, e.text(), v));
    return v;
  };
  int64_t rows = value(a.init.rows, "rows"), cols = value(a.init.cols, "cols"),
          nnz = value(a.init.nnz, "nnz");
  if (static_cast<double>(rows) * static_cast<double>(cols) < static_cast<double>(nnz))
    r.Fail(
        it.get("nnz"), field + ".nnz",
        fmt::format("at size set '{}': {} nonzeros do not fit {} x {}", set.name, nnz, rows, cols));
  int64_t largest = a.init.kind == InitSpec::Kind::kCsrRowPtr ? nnz : cols - 1;
  if (a.dtype == DType::kI32 && largest > std::numeric_limits<int32_t>::max())
    r.Fail(t.get("type"), "args." + a.name + ".type",
           fmt::format("at size set '{}': index {} does not fit i32", set.name, largest));
  int64_t want = a.init.kind == InitSpec::Kind::kCsrRowPtr ? rows + 1 : nnz;
  if (count != want)
    r.Fail(t.get("shape"), "args." + a.name + ".shape",
           fmt::format("at size set '{}': {} elements, but {} needs {} ({})", set.name, count,
                       a.init.kind == InitSpec::Kind::kCsrRowPtr ? "csr_row_ptr" : "csr_col_idx",
                       want, a.init.kind == InitSpec::Kind::kCsrRowPtr ? "rows + 1" : "nnz"));
}

// randint's bounds at one size set: integers, 0 <= low < high, high - 1 within the type. The
// device draws in float (eval/device_workspace.cpp): high at most 2^24 from 0, 2^16 from above 0.
void CheckRandIntAtSet(const TaskReader& r, const toml::table& t, const ArgSpec& a,
                       const SizeSet& set, const Env& env) {
  const std::string field = "args." + a.name + ".init";
  const toml::table& it = *t.get("init")->as_table();
  double low = a.init.low.Eval(env), high = a.init.high.Eval(env);
  auto fail = [&](const char* key, const std::string& why) {
    r.Fail(it.get(key) ? it.get(key) : &it, field + "." + key,
           fmt::format("at size set '{}': {}", set.name, why));
  };
  if (low != std::floor(low) || high != std::floor(high))
    fail("high", fmt::format("the bounds {} and {} are not integers", low, high));
  if (low < 0) fail("low", fmt::format("low = {} is negative", low));
  if (high <= low) fail("high", fmt::format("high = {} is not above low = {}", high, low));
  double largest = a.dtype == DType::kU8 ? 255.0 : low > 0 ? double{1 << 16} : double{1 << 24};
  if (high - 1 > largest)
    fail("high", fmt::format("high - 1 = {} is above {}{}", high - 1, largest,
                             low > 0 && a.dtype != DType::kU8 ? " (with low above 0)" : ""));
}

void CheckArgAtSets(const TaskReader& r, const toml::table& t, const ArgSpec& a,
                    const std::vector<const SizeSet*>& sets) {
  const std::string field = "args." + a.name + (a.is_buffer ? ".shape" : ".value");
  const toml::node* n = t.get(a.is_buffer ? "shape" : "value");
  for (const SizeSet* set : sets) {
    Env env = SizesEnv(set->sizes);
    try {
      if (a.is_buffer) {
        int64_t count = ElementCount(a, env);
        if (IsCsr(a.init)) CheckCsrAtSet(r, t, a, count, *set, env);
        if (a.init.kind == InitSpec::Kind::kRandInt) CheckRandIntAtSet(r, t, a, *set, env);
        continue;
      }
      double v = a.value.Eval(env);
      if (std::string problem = ScalarProblem(v, a.dtype); !problem.empty()) {
        r.Fail(n, field,
               fmt::format("at size set '{}': '{}' = {} {}, and {} is an {} argument", set->name,
                           a.value.text(), v, problem, a.name, DTypeName(a.dtype)));
      }
    } catch (const ExprError& e) {
      r.Fail(n, field, fmt::format("at size set '{}': {}", set->name, e.what()));
    }
  }
}

// Every CSR part has its other part, describing the same matrix.
void CheckCsrPairs(const TaskReader& r, const toml::array& arr, const std::vector<ArgSpec>& args) {
  auto same = [](const InitSpec& x, const InitSpec& y) {
    return x.rows.text() == y.rows.text() && x.cols.text() == y.cols.text() &&
           x.nnz.text() == y.nnz.text() && x.seed == y.seed && x.skew == y.skew;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].is_buffer || !IsCsr(args[i].init)) continue;
    bool paired = false;
    for (const ArgSpec& b : args) {
      paired = paired || (b.is_buffer && IsCsr(b.init) && b.init.kind != args[i].init.kind &&
                          same(args[i].init, b.init));
    }
    if (!paired) {
      bool row_ptr = args[i].init.kind == InitSpec::Kind::kCsrRowPtr;
      r.Fail(arr.get(i)->as_table()->get("init"), "args." + args[i].name + ".init",
             fmt::format("no argument with dist = \"{}\" and the same rows, cols, nnz, seed and "
                         "skew: a CSR matrix needs both its row_ptr and its col_idx",
                         row_ptr ? "csr_col_idx" : "csr_row_ptr"));
    }
  }
}

std::vector<ArgSpec> ParseArgs(const TaskReader& r, const toml::table& root, const Names& names,
                               const std::vector<const SizeSet*>& sets) {
  const toml::node* args = r.Require(root, "args", "args");
  const toml::array* arr = args->as_array();
  if (!arr || arr->empty()) r.Fail(args, "args", "expected one or more [[args]] tables");
  std::vector<ArgSpec> out;
  std::set<std::string> seen;
  bool any_output = false;
  for (size_t i = 0; i < arr->size(); ++i) {
    const toml::table* t = arr->get(i)->as_table();
    if (!t) r.Fail(arr->get(i), fmt::format("args[{}]", i), "expected a table");
    ArgSpec a = ParseArg(r, *t, i, names);
    if (!seen.insert(a.name).second) r.Fail(t, "args." + a.name, "argument declared twice");
    CheckArgAtSets(r, *t, a, sets);
    any_output = any_output || (a.is_buffer && a.role != ArgRole::kIn);
    out.push_back(std::move(a));
  }
  if (!any_output) r.Fail(args, "args", "no argument has role \"out\" or \"inout\"");
  CheckCsrPairs(r, *arr, out);
  return out;
}

Expr ParseCostFormula(const TaskReader& r, const toml::node* n, const std::string& field,
                      const Names& names, const std::vector<const SizeSet*>& sets);

ToleranceRule ParseTolerance(const TaskReader& r, const toml::table& root, const Names& names,
                             const std::vector<const SizeSet*>& sets) {
  ToleranceRule tol;
  const toml::node* n = root.get("tolerance");
  if (!n) return tol;
  const toml::table* t = n->as_table();
  if (!t) r.Fail(n, "tolerance", "expected a table");
  r.CheckKeys(*t, {"atol", "rtol", "max_bad_ratio"}, "tolerance.");
  // atol and rtol: numbers, or expressions non-negative at every set.
  if (const toml::node* a = t->get("atol"))
    tol.atol = ParseCostFormula(r, a, "tolerance.atol", names, sets);
  if (const toml::node* a = t->get("rtol"))
    tol.rtol = ParseCostFormula(r, a, "tolerance.rtol", names, sets);
  tol.max_bad_ratio = r.Number(*t, "max_bad_ratio", "tolerance.max_bad_ratio", 0.0);
  if (tol.max_bad_ratio < 0 || tol.max_bad_ratio > 1)
    r.Fail(t->get("max_bad_ratio"), "tolerance.max_bad_ratio", "must be between 0 and 1");
  return tol;
}

// A cost formula: over sizes and settings, a non-negative number at every set.
Expr ParseCostFormula(const TaskReader& r, const toml::node* n, const std::string& field,
                      const Names& names, const std::vector<const SizeSet*>& sets) {
  Expr e = r.ExprOf(n, field);
  r.CheckNames(e, names.All(), names, n, field);
  for (const SizeSet* set : sets) {
    try {
      double v = e.Eval(SizesEnv(set->sizes));
      if (!std::isfinite(v) || v < 0)
        r.Fail(n, field,
               fmt::format("at size set '{}': '{}' = {}, not a non-negative number", set->name,
                           e.text(), v));
    } catch (const ExprError& err) {
      r.Fail(n, field, fmt::format("at size set '{}': {}", set->name, err.what()));
    }
  }
  return e;
}

// A kernel file named in [kernels]: a regular file inside the task folder.
std::string KernelFile(const TaskReader& r, const toml::node& v, const std::string& field,
                       const std::string& dir) {
  if (!v.is_string()) r.Fail(&v, field, "expected a file name");
  std::string file(v.as_string()->get());
  if (file.empty() || file.find('\0') != std::string::npos)
    r.Fail(&v, field, "expected a file name");
  std::error_code ec;
  std::filesystem::file_status st = std::filesystem::status(dir + "/" + file, ec);
  if (ec || !std::filesystem::exists(st))
    r.Fail(&v, field, "file '" + file + "' does not exist in " + dir);
  if (!std::filesystem::is_regular_file(st))
    r.Fail(&v, field, "'" + file + "' in " + dir + " is not a regular file");
  return file;
}

const std::vector<std::string> kLanguageNames = {"cuda", "opencl"};
constexpr const char* kTorchKey = "torch";

Language LanguageOf(std::string_view name) {
  return name == "cuda" ? Language::kCuda : Language::kOpenCL;
}

// A table of language = file. `torch`, when given, receives the reference's PyTorch module (the
// one key besides the languages, and only the reference takes it).
std::map<Language, std::string> ParseKernelFiles(const TaskReader& r, const toml::table& kernels,
                                                 const std::string& key, const std::string& dir,
                                                 std::string* torch = nullptr) {
  std::map<Language, std::string> out;
  const toml::node* n = r.Require(kernels, key, "kernels." + key);
  const toml::table* t = n->as_table();
  if (!t)
    r.Fail(n, "kernels." + key, "expected a table such as { cuda = \"x.cu\", opencl = \"x.cl\" }");
  std::vector<std::string> known = kLanguageNames;
  if (torch) known.push_back(kTorchKey);
  r.CheckKeys(*t, known, "kernels." + key + ".");
  for (const auto& [k, v] : *t) {
    std::string field = "kernels." + key + "." + std::string(k.str());
    if (k.str() == kTorchKey) {
      *torch = KernelFile(r, v, field, dir);
      if (!torch->ends_with(".py"))
        r.Fail(&v, field,
               "'" + *torch +
                   "' is not a Python file (.py): the torch reference is a module "
                   "with class Model, get_inputs() and get_init_inputs() (docs/pytorch.md)");
      continue;
    }
    out[LanguageOf(k.str())] = KernelFile(r, v, field, dir);
  }
  if (t->empty()) r.Fail(n, "kernels." + key, "empty: name a file for at least one language");
  return out;
}

void ParseKernels(const TaskReader& r, const toml::table& root, Task& task) {
  const toml::node* kernels = r.Require(root, "kernels", "kernels");
  const toml::table* kt = kernels->as_table();
  if (!kt) r.Fail(kernels, "kernels", "expected a table");
  r.CheckKeys(*kt, {"reference", "baseline", "templates"}, "kernels.");
  task.reference = ParseKernelFiles(r, *kt, "reference", task.dir, &task.torch_reference);
  // A PyTorch reference is the time to beat too, so a baseline kernel is optional beside it.
  if (task.torch_reference.empty() || kt->get("baseline"))
    task.baseline = ParseKernelFiles(r, *kt, "baseline", task.dir);
  if (const toml::node* tn = kt->get("templates")) {
    const toml::table* tt = tn->as_table();
    if (!tt) r.Fail(tn, "kernels.templates", "expected a table of language = [files]");
    r.CheckKeys(*tt, kLanguageNames, "kernels.templates.");
    for (const auto& [k, v] : *tt) {
      std::string field = "kernels.templates." + std::string(k.str());
      if (!v.is_array()) r.Fail(&v, field, "expected an array of file names");
      std::vector<std::string>& files = task.templates[LanguageOf(k.str())];  // [] is a list too
      for (const auto& f : *v.as_array()) files.push_back(KernelFile(r, f, field, task.dir));
    }
  }
  if (task.Languages().empty() && task.torch_reference.empty())
    r.Fail(kernels, "kernels", "no language has both a reference and a baseline");
}

Task TaskFromTable(const toml::table& root, const std::string& dir, const std::string& file) {
  TaskReader r(file);
  r.CheckKeys(root,
              {"name", "op_class", "description", "sizes", "settings", "args", "check", "bench",
               "tolerance", "cost", "kernels", "precision", "variants"},
              "");
  Task task;
  task.dir = dir;
  task.name = r.String(root, "name", "name");
  task.op_class = r.String(root, "op_class", "op_class");
  task.description = r.String(root, "description", "description", "");
  task.precision = r.String(root, "precision", "precision", "");
  if (!task.precision.empty() &&
      !std::set<std::string>{"fp32", "tf32", "fp16-accumulate-fp32", "bf16-accumulate-fp32"}.count(
          task.precision)) {
    r.Fail(root.get("precision"), "precision",
           "expected \"fp32\", \"tf32\", \"fp16-accumulate-fp32\" or \"bf16-accumulate-fp32\"");
  }

  Names names = ParseNames(r, root);
  task.size_names = names.sizes;
  task.settings = names.setting_defaults;
  task.check_sizes = ParseSizeSets(r, root, "check", names, false);
  task.bench_sizes = ParseSizeSets(r, root, "bench", names, true);
  std::vector<const SizeSet*> sets;
  for (const auto* list : {&task.check_sizes, &task.bench_sizes}) {
    for (const SizeSet& s : *list) sets.push_back(&s);
  }
  task.args = ParseArgs(r, root, names, sets);
  task.tolerance = ParseTolerance(r, root, names, sets);

  const toml::node* cost = r.Require(root, "cost", "cost");
  const toml::table* ct = cost->as_table();
  if (!ct) r.Fail(cost, "cost", "expected a table with min_bytes (and optionally flops)");
  r.CheckKeys(*ct, {"min_bytes", "flops"}, "cost.");
  task.min_bytes = ParseCostFormula(r, r.Require(*ct, "min_bytes", "cost.min_bytes"),
                                    "cost.min_bytes", names, sets);
  if (const toml::node* fl = ct->get("flops"))
    task.flops = ParseCostFormula(r, fl, "cost.flops", names, sets);

  ParseKernels(r, root, task);
  return task;
}

// The task `root` describes, as variant `variant` of it when not empty.
Task TaskFromRoot(toml::table& root, const std::string& dir, const std::string& file,
                  const std::string& variant) {
  const TaskReader r(file);
  std::vector<std::string> variants = task_reader::CheckVariants(r, root);
  Config defines;
  if (!variant.empty()) defines = task_reader::ApplyVariant(r, root, variant);
  Task task = TaskFromTable(root, dir, file);
  task.variants = std::move(variants);
  if (!variant.empty()) {
    task.name = JoinTaskVariant(task.name, variant);
    task.variant = variant;
    task.defines = std::move(defines);
  }
  return task;
}

std::string NormalizedDir(const std::string& dir_in) {
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(dir_in, ec);
  std::string dir = (ec ? std::filesystem::path(dir_in) : abs).lexically_normal().string();
  if (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

}  // namespace

std::pair<double, double> InitSpec::BoundsAt(const Env& sizes_env) const {
  if (kind == Kind::kRandInt) return {low.Eval(sizes_env), high.Eval(sizes_env)};
  return {a, b};
}

Tolerance ToleranceRule::At(const Sizes& sizes) const {
  Env env = SizesEnv(sizes);
  return {atol.Eval(env), rtol.Eval(env), max_bad_ratio};
}

Env SizesEnv(const Sizes& sizes) {
  Env env;
  for (const auto& [k, v] : sizes) env.Set(k, v);
  return env;
}

int64_t ElementCount(const ArgSpec& arg, const Env& sizes_env) {
  // At most 2^56 elements, so the byte count of any element type fits an int64.
  constexpr int64_t kMaxElements = int64_t{1} << 56;
  int64_t n = 1;
  for (const Expr& dim : arg.shape) {
    int64_t d = dim.EvalInt(sizes_env);
    if (d <= 0)
      throw ExprError(fmt::format("dimension '{}' is {}, not positive", dim.text(), d), 0);
    if (n > kMaxElements / d) throw ExprError("the buffer is too large (over 2^56 elements)", 0);
    n *= d;
  }
  return n;
}

const SizeSet& Task::BenchSizes(const std::string& name, const std::string& device_class) const {
  if (!name.empty()) {
    for (const auto& s : bench_sizes) {
      if (s.name == name) return s;
    }
    for (const auto& s : check_sizes) {
      if (s.name == name) return s;
    }
    std::string known;
    for (const auto& s : bench_sizes) known += " " + s.name;
    throw InputError(dir + "/task.toml", 0, "bench",
                     "no size set named '" + name + "' (benchmark sets:" + known + ")");
  }
  for (const auto& s : bench_sizes) {
    if (s.device_class == device_class) return s;
  }
  return bench_sizes.front();
}

std::vector<Language> Task::Languages() const {
  std::vector<Language> out;
  for (const auto& [lang, file] : reference) {
    if (baseline.count(lang)) out.push_back(lang);
  }
  return out;
}

Task LoadTask(const std::string& dir_in, const std::string& variant) {
  std::string dir = NormalizedDir(dir_in);
  std::string file = dir + "/task.toml";
  std::error_code ec;
  if (!std::filesystem::exists(file, ec))
    throw InputError(file, 0, "file", "no task.toml in this folder");
  toml::table root = ReadTomlFile(file);
  Task task = TaskFromRoot(root, dir, file, variant);
  task.id = JoinTaskVariant(TaskContentId(dir), variant);  // another task of the same folder
  return task;
}

Task LoadTaskFromText(const std::string& dir_in, std::string_view text,
                      const std::string& variant) {
  std::string dir = NormalizedDir(dir_in);
  std::string file = dir + "/task.toml";
  toml::table root;
  try {
    root = toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    throw InputError(file, static_cast<int>(e.source().begin.line), "syntax",
                     std::string(e.description()));
  }
  Task task = TaskFromRoot(root, dir, file, variant);
  task.id = JoinTaskVariant(TaskContentId(dir, text), variant);
  return task;
}

void CheckKernelSignature(const Task& task, const Kernel& kernel) {
  std::vector<std::string> names;
  for (const ArgSpec& a : task.args) names.push_back(a.name);
  CheckEntryArgs(kernel, names, "task '" + task.name + "'");
}

}  // namespace kf
