#include "core/task_variant.hpp"

#include <fmt/format.h>

#include "core/dtype.hpp"

namespace kf::task_reader {

namespace {

const std::vector<std::string> kVariantKeys = {"description", "precision", "types",
                                               "defines",     "tolerance", "templates"};

// The names of the [[args]] as written (the full check of each comes when the task is read).
std::vector<std::string> ArgNames(const toml::table& root) {
  std::vector<std::string> names;
  if (const toml::array* args = root["args"].as_array()) {
    for (const toml::node& a : *args) {
      if (const toml::table* t = a.as_table()) {
        if (const auto* n = t->get_as<std::string>("name")) names.push_back(n->get());
      }
    }
  }
  return names;
}

const toml::table& TableOf(const TaskReader& r, const toml::node* n, const std::string& field,
                           const char* what) {
  if (!n->is_table()) r.Fail(n, field, std::string("expected a table ") + what);
  return *n->as_table();
}

std::string DefineValue(const TaskReader& r, const toml::node& v, const std::string& field) {
  if (v.is_integer()) return std::to_string(v.as_integer()->get());
  if (v.is_floating_point()) return fmt::format("{}", v.as_floating_point()->get());
  if (v.is_boolean()) return v.as_boolean()->get() ? "1" : "0";
  if (v.is_string() && !v.as_string()->get().empty()) return v.as_string()->get();
  r.Fail(&v, field, "expected a number, a boolean or a non-empty string (the macro's value)");
}

Config ParseDefines(const TaskReader& r, const toml::table& variant, const std::string& field) {
  Config defines;
  const toml::node* n = variant.get("defines");
  if (!n) return defines;
  for (const auto& [k, v] : TableOf(r, n, field, "of MACRO = value")) {
    const std::string key(k.str());
    if (!IsIdentifier(key))
      r.Fail(&v, field + "." + key, "a macro's name is letters, digits and _");
    defines[key] = DefineValue(r, v, field + "." + key);
  }
  return defines;
}

void CheckVariant(const TaskReader& r, const toml::table& v, const std::string& field,
                  const std::vector<std::string>& args) {
  if (const toml::node* nested = v.get("variants"))
    r.Fail(nested, field + ".variants",
           "a variant has no variants of its own: a variant applies to the task itself");
  r.CheckKeys(v, kVariantKeys, field + ".");
  for (const char* key : {"description", "precision"}) {
    if (const toml::node* n = v.get(key); n && !n->is_string())
      r.Fail(n, field + "." + key, "expected a string");
  }
  if (const toml::node* types = v.get("types")) {
    for (const auto& [k, t] : TableOf(r, types, field + ".types", "of ARG = \"type\"")) {
      const std::string arg(k.str()), at = field + ".types." + arg;
      if (!Contains(args, arg)) {
        const std::string close = ClosestName(arg, args);
        r.Fail(&t, at,
               fmt::format("no argument '{}' in [[args]]{}", arg,
                           close.empty() ? " (arguments: " + Joined(args) + ")"
                                         : "; did you mean '" + close + "'?"));
      }
      if (!t.is_string() || !ParseDType(t.as_string()->get()))
        r.Fail(&t, at, "expected an element type (f16, bf16, f32, f64, i32, i64, u8)");
    }
  }
  ParseDefines(r, v, field + ".defines");
  if (const toml::node* tol = v.get("tolerance"))
    r.CheckKeys(TableOf(r, tol, field + ".tolerance", "of atol, rtol, max_bad_ratio"),
                {"atol", "rtol", "max_bad_ratio"}, field + ".tolerance.");
  if (const toml::node* templates = v.get("templates")) {
    const toml::table& t = TableOf(r, templates, field + ".templates", "of language = [files]");
    r.CheckKeys(t, {"cuda", "opencl"}, field + ".templates.");
    for (const auto& [k, files] : t) {
      if (!files.is_array())
        r.Fail(&files, field + ".templates." + std::string(k.str()),
               "expected an array of file names");
    }
  }
}

// Puts `n` (moved, so it keeps its place in the file for messages) at `key` of `dst`.
void MoveInto(toml::table& dst, std::string_view key, toml::node& n) {
  n.visit([&](auto& v) { dst.insert_or_assign(key, std::move(v)); });
}

// dst[key] as a table, made when absent (a non-table is left for the task's own checks).
toml::table* TableAt(toml::table& dst, std::string_view key) {
  if (!dst.contains(key)) dst.insert(key, toml::table{});
  return dst.get_as<toml::table>(key);
}

}  // namespace

std::vector<std::string> CheckVariants(const TaskReader& r, const toml::table& root) {
  std::vector<std::string> names;
  const toml::node* n = root.get("variants");
  if (!n) return names;
  const std::vector<std::string> args = ArgNames(root);
  std::vector<std::pair<int, std::string>> by_line;
  for (const auto& [k, v] : TableOf(r, n, "variants", "of [variants.NAME] tables")) {
    const std::string name(k.str()), field = "variants." + name;
    if (!IsIdentifier(name))
      r.Fail(&v, field,
             "a variant's name is letters, digits and _ (it follows the task's name after '.')");
    CheckVariant(r, TableOf(r, &v, field, "(a [variants.NAME] section)"), field, args);
    by_line.emplace_back(TaskReader::LineOf(&v), name);
  }
  std::sort(by_line.begin(), by_line.end());
  for (auto& [line, name] : by_line) names.push_back(std::move(name));
  return names;
}

Config ApplyVariant(const TaskReader& r, toml::table& root, const std::string& name) {
  toml::table* variants = root.get_as<toml::table>("variants");
  const std::string first = name.substr(0, name.find('.'));
  toml::table* found = variants ? variants->get_as<toml::table>(first) : nullptr;
  if (found && first != name)
    r.Fail(found, "variants." + first,
           fmt::format("'{}' asks for a variant of the variant '{}': a variant applies to the "
                       "task itself only",
                       name, first));
  if (!found) {
    std::vector<std::string> known = CheckVariants(r, root);
    r.Fail(variants ? static_cast<const toml::node*>(variants) : &root, "variants",
           known.empty() ? fmt::format("no variant '{}': the task declares none", name)
                         : fmt::format("no variant '{}' (variants: {})", name, Joined(known)));
  }
  toml::table v = std::move(*found);
  root.erase("variants");
  Config defines = ParseDefines(r, v, "variants." + name + ".defines");
  for (const char* key : {"description", "precision"}) {
    if (toml::node* n = v.get(key)) MoveInto(root, key, *n);
  }
  if (toml::table* types = v.get_as<toml::table>("types")) {
    for (auto&& [arg, type] : *types) {
      for (toml::node& a : *root["args"].as_array()) {
        toml::table* t = a.as_table();
        const auto* arg_name = t ? t->get_as<std::string>("name") : nullptr;
        if (arg_name && arg_name->get() == arg.str()) MoveInto(*t, "type", type);
      }
    }
  }
  if (toml::table* tol = v.get_as<toml::table>("tolerance")) {
    if (toml::table* dst = TableAt(root, "tolerance"))
      for (auto&& [k, n] : *tol) MoveInto(*dst, k.str(), n);
  }
  if (toml::table* templates = v.get_as<toml::table>("templates")) {
    toml::table* kernels = root.get_as<toml::table>("kernels");
    if (toml::table* dst = kernels ? TableAt(*kernels, "templates") : nullptr)
      for (auto&& [lang, files] : *templates) MoveInto(*dst, lang.str(), files);
  }
  return defines;
}

}  // namespace kf::task_reader
