#include "core/task.hpp"

#include <toml++/toml.h>

#include <filesystem>
#include <set>

#include "core/input_error.hpp"
#include "core/toml_file.hpp"

namespace kf {

namespace {

class TaskReader {
 public:
  explicit TaskReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void Fail(const toml::node* node, const std::string& field,
                         const std::string& message) const {
    int line = node ? static_cast<int>(node->source().begin.line) : 0;
    throw InputError(file_, line, field, message);
  }

  const toml::node* Require(const toml::table& t, const std::string& key,
                            const std::string& field) const {
    const toml::node* n = t.get(key);
    if (!n) Fail(&t, field, "missing");
    return n;
  }

  std::string String(const toml::table& t, const std::string& key, const std::string& field,
                     std::optional<std::string> fallback = std::nullopt) const {
    const toml::node* n = t.get(key);
    if (!n) {
      if (fallback) return *fallback;
      Fail(&t, field, "missing");
    }
    if (!n->is_string()) Fail(n, field, "expected a string");
    return std::string(n->as_string()->get());
  }

  double Number(const toml::table& t, const std::string& key, const std::string& field,
                double fallback) const {
    const toml::node* n = t.get(key);
    if (!n) return fallback;
    if (n->is_integer()) return static_cast<double>(n->as_integer()->get());
    if (n->is_floating_point()) return n->as_floating_point()->get();
    Fail(n, field, "expected a number");
  }

  // An expression given as a string or a plain number.
  Expr ExprOf(const toml::node* n, const std::string& field) const {
    std::string text;
    if (n->is_string()) {
      text = std::string(n->as_string()->get());
    } else if (n->is_integer()) {
      text = std::to_string(n->as_integer()->get());
    } else if (n->is_floating_point()) {
      text = fmt::format("{}", n->as_floating_point()->get());
    } else {
      Fail(n, field, "expected an expression (a string or a number)");
    }
    try {
      return Expr::Parse(text);
    } catch (const ExprError& e) {
      Fail(n, field, e.what());
    }
  }

  // Checks that every name `e` reads is one of `allowed`.
  void CheckNames(const Expr& e, const std::vector<std::string>& allowed, const toml::node* n,
                  const std::string& field) const {
    for (const std::string& v : e.Variables()) {
      bool ok = false;
      for (const auto& a : allowed) ok = ok || a == v;
      if (!ok)
        Fail(n, field, fmt::format("'{}' names '{}', which is not a declared size", e.text(), v));
    }
  }

  std::string file_;
};

ArgRole ParseRole(const TaskReader& r, const toml::node* n, const std::string& field) {
  if (!n->is_string()) r.Fail(n, field, "expected \"in\", \"out\" or \"inout\"");
  std::string s(n->as_string()->get());
  if (s == "in") return ArgRole::kIn;
  if (s == "out") return ArgRole::kOut;
  if (s == "inout") return ArgRole::kInOut;
  r.Fail(n, field, "expected \"in\", \"out\" or \"inout\", got \"" + s + "\"");
}

InitSpec ParseInit(const TaskReader& r, const toml::node* n, const std::string& field,
                   const std::vector<std::string>& size_names) {
  InitSpec init;
  if (!n) return init;  // standard normal
  const toml::table* t = n->as_table();
  if (!t) r.Fail(n, field, "expected a table such as { dist = \"normal\", mean = 0, std = 1 }");
  std::string dist = r.String(*t, "dist", field + ".dist");
  if (dist == "normal") {
    init.kind = InitSpec::Kind::kNormal;
    init.a = r.Number(*t, "mean", field + ".mean", 0.0);
    init.b = r.Number(*t, "std", field + ".std", 1.0);
    if (init.b <= 0) r.Fail(n, field + ".std", "must be positive");
  } else if (dist == "uniform") {
    init.kind = InitSpec::Kind::kUniform;
    init.a = r.Number(*t, "low", field + ".low", -1.0);
    init.b = r.Number(*t, "high", field + ".high", 1.0);
    if (init.b <= init.a) r.Fail(n, field + ".high", "must be above low");
  } else if (dist == "constant") {
    init.kind = InitSpec::Kind::kConstant;
    init.a = r.Number(*t, "value", field + ".value", 0.0);
  } else if (dist == "formula") {
    init.kind = InitSpec::Kind::kFormula;
    const toml::node* idx = r.Require(*t, "index", field + ".index");
    const toml::array* arr = idx->as_array();
    if (!arr) r.Fail(idx, field + ".index", "expected an array of index names, one per dimension");
    for (const auto& e : *arr) {
      if (!e.is_string()) r.Fail(&e, field + ".index", "expected strings");
      init.index.emplace_back(e.as_string()->get());
    }
    const toml::node* v = r.Require(*t, "value", field + ".value");
    init.formula = r.ExprOf(v, field + ".value");
    std::vector<std::string> allowed = size_names;
    allowed.insert(allowed.end(), init.index.begin(), init.index.end());
    r.CheckNames(init.formula, allowed, v, field + ".value");
  } else {
    r.Fail(n, field + ".dist",
           "expected normal, uniform, constant or formula, got \"" + dist + "\"");
  }
  return init;
}

std::vector<SizeSet> ParseSizeSets(const TaskReader& r, const toml::table& root,
                                   const std::string& key,
                                   const std::vector<std::string>& size_names, bool bench) {
  std::vector<SizeSet> sets;
  const toml::node* n = r.Require(root, key, key);
  const toml::array* arr = n->as_array();
  if (!arr || arr->empty()) r.Fail(n, key, "expected one or more [[" + key + "]] tables");
  for (size_t i = 0; i < arr->size(); ++i) {
    const toml::table* t = arr->get(i)->as_table();
    std::string field = fmt::format("{}[{}]", key, i);
    if (!t) r.Fail(arr->get(i), field, "expected a table");
    SizeSet set;
    set.name = r.String(*t, "name", field + ".name");
    if (bench) set.device_class = r.String(*t, "device_class", field + ".device_class", "");
    for (const auto& [k, v] : *t) {
      std::string name(k.str());
      if (name == "name" || name == "device_class") continue;
      bool declared = false;
      for (const auto& s : size_names) declared = declared || s == name;
      if (!declared) r.Fail(&v, field + "." + name, "not a declared size (see `sizes`)");
      if (!v.is_integer() || v.as_integer()->get() <= 0)
        r.Fail(&v, field + "." + name, "expected a positive integer");
      set.sizes[name] = v.as_integer()->get();
    }
    for (const auto& s : size_names) {
      if (!set.sizes.count(s))
        r.Fail(t, field + "." + s, "missing (every size set gives every size)");
    }
    sets.push_back(std::move(set));
  }
  return sets;
}

std::map<Language, std::string> ParseKernelFiles(const TaskReader& r, const toml::table& kernels,
                                                 const std::string& key, const std::string& dir) {
  std::map<Language, std::string> out;
  const toml::node* n = r.Require(kernels, key, "kernels." + key);
  const toml::table* t = n->as_table();
  if (!t)
    r.Fail(n, "kernels." + key, "expected a table such as { cuda = \"x.cu\", opencl = \"x.cl\" }");
  for (const auto& [k, v] : *t) {
    std::string lang(k.str());
    std::string field = "kernels." + key + "." + lang;
    Language language;
    if (lang == "cuda") {
      language = Language::kCuda;
    } else if (lang == "opencl") {
      language = Language::kOpenCL;
    } else {
      r.Fail(&v, field, "expected a language: cuda or opencl");
    }
    if (!v.is_string()) r.Fail(&v, field, "expected a file name");
    std::string file(v.as_string()->get());
    if (!std::filesystem::exists(dir + "/" + file))
      r.Fail(&v, field, "file '" + file + "' does not exist in " + dir);
    out[language] = file;
  }
  return out;
}

}  // namespace

Env SizesEnv(const Sizes& sizes) {
  Env env;
  for (const auto& [k, v] : sizes) env.Set(k, static_cast<double>(v));
  return env;
}

int64_t ElementCount(const ArgSpec& arg, const Env& sizes_env) {
  int64_t n = 1;
  for (const Expr& dim : arg.shape) n *= dim.EvalInt(sizes_env);
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

Task LoadTask(const std::string& dir_in) {
  std::string dir = std::filesystem::absolute(dir_in).lexically_normal().string();
  if (!dir.empty() && dir.back() == '/') dir.pop_back();
  std::string file = dir + "/task.toml";
  if (!std::filesystem::exists(file))
    throw InputError(file, 0, "file", "no task.toml in this folder");
  toml::table root = ReadTomlFile(file);
  TaskReader r(file);
  Task task;
  task.dir = dir;
  task.name = r.String(root, "name", "name");
  task.op_class = r.String(root, "op_class", "op_class");
  task.description = r.String(root, "description", "description", "");

  const toml::node* sizes = r.Require(root, "sizes", "sizes");
  if (!sizes->is_array() || sizes->as_array()->empty())
    r.Fail(sizes, "sizes", "expected an array of size names");
  for (const auto& s : *sizes->as_array()) {
    if (!s.is_string()) r.Fail(&s, "sizes", "expected strings");
    task.size_names.emplace_back(s.as_string()->get());
  }

  const toml::node* args = r.Require(root, "args", "args");
  const toml::array* arr = args->as_array();
  if (!arr || arr->empty()) r.Fail(args, "args", "expected one or more [[args]] tables");
  std::set<std::string> arg_names;
  bool any_output = false;
  for (size_t i = 0; i < arr->size(); ++i) {
    const toml::table* t = arr->get(i)->as_table();
    std::string field = fmt::format("args[{}]", i);
    if (!t) r.Fail(arr->get(i), field, "expected a table");
    ArgSpec a;
    a.line = static_cast<int>(t->source().begin.line);
    a.name = r.String(*t, "name", field + ".name");
    field = "args." + a.name;
    if (!arg_names.insert(a.name).second) r.Fail(t, field, "argument declared twice");
    std::string type = r.String(*t, "type", field + ".type");
    std::optional<DType> dtype = ParseDType(type);
    if (!dtype)
      r.Fail(t->get("type"), field + ".type",
             "unknown type '" + type + "' (f16, f32, f64, i32, i64, u8)");
    a.dtype = *dtype;
    if (const toml::node* shape = t->get("shape")) {
      a.is_buffer = true;
      if (!shape->is_array() || shape->as_array()->empty())
        r.Fail(shape, field + ".shape", "expected an array of dimension expressions");
      for (const auto& d : *shape->as_array()) {
        a.shape.push_back(r.ExprOf(&d, field + ".shape"));
        r.CheckNames(a.shape.back(), task.size_names, &d, field + ".shape");
      }
      a.role = ParseRole(r, r.Require(*t, "role", field + ".role"), field + ".role");
      any_output = any_output || a.role != ArgRole::kIn;
      if (a.role != ArgRole::kOut) {
        a.init = ParseInit(r, t->get("init"), field + ".init", task.size_names);
        if (a.init.kind == InitSpec::Kind::kFormula && a.init.index.size() != a.shape.size()) {
          r.Fail(t->get("init"), field + ".init.index", "needs one index name per shape dimension");
        }
      }
    } else {
      a.is_buffer = false;
      const toml::node* v = t->get("value");
      if (!v)
        r.Fail(t, field + ".value",
               "a scalar argument needs a value expression (or give a shape to make it a buffer)");
      a.value = r.ExprOf(v, field + ".value");
      r.CheckNames(a.value, task.size_names, v, field + ".value");
    }
    task.args.push_back(std::move(a));
  }
  if (!any_output) r.Fail(args, "args", "no argument has role \"out\" or \"inout\"");

  task.check_sizes = ParseSizeSets(r, root, "check", task.size_names, false);
  task.bench_sizes = ParseSizeSets(r, root, "bench", task.size_names, true);
  // Every shape must evaluate to a positive integer at every size set.
  for (const auto* sets : {&task.check_sizes, &task.bench_sizes}) {
    for (const SizeSet& set : *sets) {
      Env env = SizesEnv(set.sizes);
      for (const ArgSpec& a : task.args) {
        try {
          if (a.is_buffer && ElementCount(a, env) <= 0) throw ExprError("shape is empty", 0);
          if (!a.is_buffer) a.value.Eval(env);
        } catch (const ExprError& e) {
          throw InputError(file, a.line, "args." + a.name,
                           fmt::format("at size set '{}': {}", set.name, e.what()));
        }
      }
    }
  }

  if (const toml::node* tol = root.get("tolerance")) {
    const toml::table* t = tol->as_table();
    if (!t) r.Fail(tol, "tolerance", "expected a table");
    task.tolerance.atol = r.Number(*t, "atol", "tolerance.atol", task.tolerance.atol);
    task.tolerance.rtol = r.Number(*t, "rtol", "tolerance.rtol", task.tolerance.rtol);
    task.tolerance.max_bad_ratio = r.Number(*t, "max_bad_ratio", "tolerance.max_bad_ratio", 0.0);
    if (task.tolerance.atol < 0 || task.tolerance.rtol < 0)
      r.Fail(tol, "tolerance", "atol and rtol must be non-negative");
  }

  const toml::node* cost = r.Require(root, "cost", "cost");
  const toml::table* ct = cost->as_table();
  if (!ct) r.Fail(cost, "cost", "expected a table with min_bytes (and optionally flops)");
  const toml::node* mb = r.Require(*ct, "min_bytes", "cost.min_bytes");
  task.min_bytes = r.ExprOf(mb, "cost.min_bytes");
  r.CheckNames(task.min_bytes, task.size_names, mb, "cost.min_bytes");
  if (const toml::node* fl = ct->get("flops")) {
    task.flops = r.ExprOf(fl, "cost.flops");
    r.CheckNames(*task.flops, task.size_names, fl, "cost.flops");
  }

  const toml::node* kernels = r.Require(root, "kernels", "kernels");
  const toml::table* kt = kernels->as_table();
  if (!kt) r.Fail(kernels, "kernels", "expected a table");
  task.reference = ParseKernelFiles(r, *kt, "reference", dir);
  task.baseline = ParseKernelFiles(r, *kt, "baseline", dir);
  if (const toml::node* tn = kt->get("templates")) {
    const toml::table* tt = tn->as_table();
    if (!tt) r.Fail(tn, "kernels.templates", "expected a table of language = [files]");
    for (const auto& [k, v] : *tt) {
      std::string lang(k.str());
      Language language = lang == "cuda" ? Language::kCuda : Language::kOpenCL;
      if (lang != "cuda" && lang != "opencl")
        r.Fail(&v, "kernels.templates." + lang, "expected cuda or opencl");
      if (!v.is_array()) r.Fail(&v, "kernels.templates." + lang, "expected an array of file names");
      for (const auto& f : *v.as_array()) {
        if (!f.is_string()) r.Fail(&f, "kernels.templates." + lang, "expected file names");
        std::string name(f.as_string()->get());
        if (!std::filesystem::exists(dir + "/" + name))
          r.Fail(&f, "kernels.templates." + lang, "file '" + name + "' does not exist");
        task.templates[language].push_back(name);
      }
    }
  }
  if (task.Languages().empty())
    r.Fail(kernels, "kernels", "no language has both a reference and a baseline");
  return task;
}

void CheckKernelSignature(const Task& task, const Kernel& kernel) {
  const std::string field = "entry point " + kernel.entry;
  if (kernel.arg_names.empty()) {
    throw InputError(kernel.path, 0, field,
                     "no kernel definition named '" + kernel.entry + "' was found");
  }
  if (kernel.arg_names.size() != task.args.size()) {
    throw InputError(kernel.path, 0, field,
                     fmt::format("takes {} arguments; task '{}' passes {}", kernel.arg_names.size(),
                                 task.name, task.args.size()));
  }
  for (size_t i = 0; i < task.args.size(); ++i) {
    const std::string& want = task.args[i].name;
    const std::string& got = kernel.arg_names[i];
    bool ok = got == want || (got.size() > want.size() && got.compare(0, want.size(), want) == 0 &&
                              got[want.size()] == '_');
    if (!ok) {
      throw InputError(
          kernel.path, 0, field,
          fmt::format("argument {} is '{}'; the task passes '{}' there", i + 1, got, want));
    }
  }
}

}  // namespace kf
