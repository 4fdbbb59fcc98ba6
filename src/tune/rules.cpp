#include "tune/rules.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <numeric>

#include "core/codec.hpp"
#include "core/data_path.hpp"
#include "core/input_error.hpp"
#include "core/toml_file.hpp"

namespace kf {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> Strings(const toml::node* n, const std::string& file,
                                 const std::string& field) {
  std::vector<std::string> out;
  if (!n) return out;
  auto text = [&](const toml::node& v) {
    if (v.is_string()) return std::string(v.as_string()->get());
    if (v.is_integer()) return std::to_string(v.as_integer()->get());
    throw InputError(file, static_cast<int>(v.source().begin.line), field,
                     "expected strings or integers");
  };
  if (const toml::array* a = n->as_array()) {
    for (const auto& v : *a) out.push_back(text(v));
  } else {
    out.push_back(text(*n));
  }
  return out;
}

Expr ParseExprAt(const toml::node* n, const std::string& file, const std::string& field) {
  if (!n->is_string())
    throw InputError(file, static_cast<int>(n->source().begin.line), field,
                     "expected an expression string");
  try {
    return Expr::Parse(std::string(n->as_string()->get()));
  } catch (const ExprError& e) {
    throw InputError(file, static_cast<int>(n->source().begin.line), field, e.what());
  }
}

std::map<std::string, std::vector<std::string>> ValueTable(const toml::node* n,
                                                           const std::string& file,
                                                           const std::string& field) {
  std::map<std::string, std::vector<std::string>> out;
  if (!n) return out;
  const toml::table* t = n->as_table();
  if (!t)
    throw InputError(file, static_cast<int>(n->source().begin.line), field,
                     "expected { PARAM = [values] }");
  for (const auto& [k, v] : *t)
    out[std::string(k.str())] = Strings(&v, file, field + "." + std::string(k.str()));
  return out;
}

}  // namespace

bool Rule::Applies(const RuleContext& c) const {
  if (!op_classes.empty() &&
      std::find(op_classes.begin(), op_classes.end(), c.op_class) == op_classes.end())
    return false;
  if (!vendor.empty() && c.vendor.find(vendor) == std::string::npos) return false;
  if (!arch.empty() && c.arch.rfind(arch, 0) != 0) return false;
  if (!device_class.empty() && c.device_class != device_class) return false;
  for (const std::string& s : source_contains) {
    if (c.source.find(s) == std::string::npos) return false;
  }
  if (device_condition) {
    try {
      if (!device_condition->EvalBool(c.device)) return false;
    } catch (const ExprError&) {
      return false;  // a property this device does not report
    }
  }
  return true;
}

std::vector<Rule> LoadRuleFile(const std::string& path) {
  toml::table root = ReadTomlFile(path);
  std::vector<Rule> rules;
  const toml::array* list = root["rule"].as_array();
  if (!list) throw InputError(path, 0, "rule", "expected [[rule]] tables");
  for (const toml::node& node : *list) {
    const toml::table* t = node.as_table();
    Rule r;
    r.file = path;
    r.line = static_cast<int>(node.source().begin.line);
    if (!t) throw InputError(path, r.line, "rule", "expected a table");
    const toml::node* name = t->get("name");
    if (!name || !name->is_string()) throw InputError(path, r.line, "rule.name", "missing");
    r.name = name->as_string()->get();
    std::string field = "rule " + r.name;
    if (const toml::node* w = t->get("when")) {
      const toml::table* when = w->as_table();
      if (!when) throw InputError(path, r.line, field + ".when", "expected a table");
      for (const auto& [k, v] : *when) {
        std::string key(k.str());
        std::string f = field + ".when." + key;
        if (key == "op_class") {
          r.op_classes = Strings(&v, path, f);
        } else if (key == "vendor" || key == "arch" || key == "device_class") {
          std::vector<std::string> one = Strings(&v, path, f);
          (key == "vendor" ? r.vendor
           : key == "arch" ? r.arch
                           : r.device_class) = one.empty() ? "" : one[0];
        } else if (key == "source_contains") {
          r.source_contains = Strings(&v, path, f);
        } else if (key == "requires") {
          r.requires_params = Strings(&v, path, f);
        } else if (key == "lacks") {
          r.lacks_params = Strings(&v, path, f);
        } else if (key == "device") {
          r.device_condition = ParseExprAt(&v, path, f);
        } else {
          throw InputError(path, static_cast<int>(v.source().begin.line), f,
                           "unknown condition (op_class, vendor, arch, device_class, "
                           "source_contains, requires, lacks, device)");
        }
      }
    }
    r.restrict_values = ValueTable(t->get("restrict"), path, field + ".restrict");
    r.order_values = ValueTable(t->get("order"), path, field + ".order");
    if (const toml::node* f = t->get("forbid")) {
      if (const toml::array* a = f->as_array()) {
        for (const auto& e : *a) r.forbid.push_back(ParseExprAt(&e, path, field + ".forbid"));
      } else {
        r.forbid.push_back(ParseExprAt(f, path, field + ".forbid"));
      }
    }
    if (const toml::node* h = t->get("hint"); h && h->is_string()) r.hint = h->as_string()->get();
    for (const auto& [k, v] : *t) {
      std::string key(k.str());
      if (key != "name" && key != "when" && key != "restrict" && key != "order" &&
          key != "forbid" && key != "hint") {
        throw InputError(path, static_cast<int>(v.source().begin.line), field + "." + key,
                         "unknown field (name, when, restrict, forbid, order, hint)");
      }
    }
    rules.push_back(std::move(r));
  }
  return rules;
}

std::vector<Rule> LoadRules(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".toml") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<Rule> rules;
  for (const std::string& f : files) {
    std::vector<Rule> more = LoadRuleFile(f);
    rules.insert(rules.end(), more.begin(), more.end());
  }
  return rules;
}

std::string DefaultRulesDir() {
  return DataPath("KF_RULES_DIR", "rules", KF_SOURCE_RULES_DIR);
}

RuledSpace ApplyRules(const std::vector<Rule>& rules, const RuleContext& context,
                      const SearchSpace& space) {
  RuledSpace out{space, {}, {}, {}};
  std::vector<const Rule*> active;
  for (const Rule& r : rules) {
    auto has = [&](const std::string& n) {
      return std::any_of(space.params().begin(), space.params().end(),
                         [&](const TuneParam& p) { return p.name == n; });
    };
    bool fits = std::all_of(r.requires_params.begin(), r.requires_params.end(), has) &&
                std::none_of(r.lacks_params.begin(), r.lacks_params.end(), has);
    if (fits && r.Applies(context)) active.push_back(&r);
  }
  if (active.empty()) return out;
  const auto& params = space.params();
  // Which value indices of each parameter survive the restrictions.
  std::vector<std::vector<bool>> allowed(params.size());
  for (size_t i = 0; i < params.size(); ++i) allowed[i].assign(params[i].values.size(), true);
  Env device = context.device;
  std::vector<Expr> forbids;
  for (const Rule* r : active) {
    out.applied.push_back(r->name);
    if (!r->hint.empty()) out.hints.push_back(r->hint);
    for (const auto& [name, values] : r->restrict_values) {
      for (size_t i = 0; i < params.size(); ++i) {
        if (params[i].name != name) continue;
        for (size_t v = 0; v < params[i].values.size(); ++v) {
          if (std::find(values.begin(), values.end(), params[i].values[v]) == values.end())
            allowed[i][v] = false;
        }
      }
    }
    forbids.insert(forbids.end(), r->forbid.begin(), r->forbid.end());
  }
  auto keep = [&](const Point& p) {
    Env env = device;
    for (size_t i = 0; i < params.size(); ++i) {
      if (!allowed[i][static_cast<size_t>(p[i])]) return false;
      env.Set(params[i].name, params[i].numeric[static_cast<size_t>(p[i])]);
    }
    for (const Expr& f : forbids) {
      try {
        if (f.EvalBool(env)) return false;
      } catch (const ExprError&) {
        // names a parameter this space lacks: the rule does not speak to it
      }
    }
    return true;
  };
  std::vector<Point> kept;
  for (const Point& p : space.points()) {
    if (keep(p)) kept.push_back(p);
  }
  if (kept.empty()) {  // rules that leave nothing are wrong for this kernel: ignore them, say so
    out.applied.clear();
    out.hints.push_back("the rules would have removed every configuration; they were not applied");
    return out;
  }
  out.space = SearchSpace::FromPoints(params, std::move(kept));
  // Try first: points whose ordered parameters take preferred values, taken round-robin over the
  // preferred combinations (best first), so four points cover several preferred values.
  std::map<std::vector<int>, std::vector<Point>> groups;  // ordered-value ranks -> points
  for (const Point& p : out.space.points()) {
    std::vector<int> ranks;
    bool preferred = true;
    for (const Rule* r : active) {
      for (const auto& [name, values] : r->order_values) {
        for (size_t i = 0; i < params.size(); ++i) {
          if (params[i].name != name) continue;
          auto it =
              std::find(values.begin(), values.end(), params[i].values[static_cast<size_t>(p[i])]);
          preferred = preferred && it != values.end();
          ranks.push_back(static_cast<int>(it - values.begin()));
        }
      }
    }
    if (!ranks.empty() && preferred) groups[ranks].push_back(p);
  }
  std::vector<std::pair<int, std::vector<Point>*>> ordered;  // rank sum, points
  for (auto& [ranks, points] : groups)
    ordered.emplace_back(std::accumulate(ranks.begin(), ranks.end(), 0), &points);
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  // Within a group, the points nearest the default come first: the ordered values are the rule's
  // advice, the rest of the configuration is the template author's.
  std::optional<Point> home = space.FromConfig(context.defaults);
  if (!context.defaults.empty() && home) {
    for (auto& [ranks, points] : groups) {
      auto distance = [&](const Point& p) {
        int changed = 0, steps = 0;
        for (size_t i = 0; i < p.size(); ++i) {
          changed += p[i] != (*home)[i];
          steps += std::abs(p[i] - (*home)[i]);
        }
        return std::pair(changed, steps);
      };
      std::stable_sort(points.begin(), points.end(),
                       [&](const Point& a, const Point& b) { return distance(a) < distance(b); });
    }
  }
  for (size_t round = 0; out.try_first.size() < 4 && !ordered.empty(); ++round) {
    bool any = false;
    for (auto& [rank, g] : ordered) {
      if (round < g->size() && out.try_first.size() < 4) {
        // Without a default, spread within a group: its points in steps across the list.
        size_t step = home ? 1 : std::max<size_t>(1, g->size() / 2);
        out.try_first.push_back((*g)[(round * step + (home ? 0 : round / 2)) % g->size()]);
        any = true;
      }
    }
    if (!any) break;
  }
  return out;
}

std::vector<Point> StartingPoints(const SearchSpace& space, const Config& defaults,
                                  const std::vector<Point>& try_first, int budget) {
  std::vector<Point> out;
  if (std::optional<Point> home = space.FromConfig(defaults);
      !defaults.empty() && home && space.IsValid(*home))
    out.push_back(*home);
  size_t limit = out.size() + static_cast<size_t>(std::max(1, budget / 4));
  for (const Point& p : try_first) {
    if (out.size() >= limit) break;
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  return out;
}

nlohmann::json RuleContextToJson(const RuleContext& c) {
  nlohmann::json device = nlohmann::json::object();
  for (const auto& [k, v] : c.device.entries()) device[k] = v;
  nlohmann::json out = {
      {"op_class", c.op_class},         {"vendor", c.vendor},           {"arch", c.arch},
      {"device_class", c.device_class}, {"device_name", c.device_name}, {"device", device}};
  if (!c.defaults.empty()) out["defaults"] = ConfigToJson(c.defaults);
  return out;
}

RuleContext RecordedSpaceContext(const ReplayObjective& replay, const std::string& path) {
  RuleContext c;
  const nlohmann::json& j = replay.context();
  if (j.is_object()) {  // one of our recordings: its own words
    c.op_class = j.value("op_class", "");
    c.vendor = j.value("vendor", "");
    c.arch = j.value("arch", "");
    c.device_class = j.value("device_class", "");
    c.device_name = j.value("device_name", "");
    if (j.contains("device") && j["device"].is_object()) {
      for (const auto& [k, v] : j["device"].items()) {
        if (v.is_number()) c.device.Set(k, v.get<double>());
      }
    }
    if (j.contains("defaults")) c.defaults = ConfigFromJson(j["defaults"]);
    return c;
  }
  std::string device_name =
      replay.device_name().empty() ? fs::path(path).filename().string() : replay.device_name();
  c.device_name = device_name;
  c.op_class = replay.kernel_name();
  c.device_class = "gpu";
  bool amd = device_name.find("MI") != std::string::npos ||
             device_name.find("AMD") != std::string::npos ||
             device_name.find("Radeon") != std::string::npos;
  c.vendor = amd ? "AMD" : device_name.find("NVIDIA") != std::string::npos ? "NVIDIA" : "";
  c.device.Set("sub_group_width", amd ? 64 : 32);
  return c;
}

}  // namespace kf
