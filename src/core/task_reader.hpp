#pragma once
// How task.toml is read (core/task.cpp and core/task_variant.cpp, nothing else): a reader that
// turns every defect into an InputError naming the file, the line and the field, and the small
// helpers its messages use. Internal to the task loader.

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/expr.hpp"
#include "core/input_error.hpp"

namespace kf::task_reader {

// The expression parser recurses once per nesting level; a bound on the text bounds the depth.
inline constexpr size_t kMaxExprLength = 1000;

inline bool IsIdentifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

inline bool Contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

inline std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Edit distance with adjacent transpositions (optimal string alignment).
inline size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

// The known name closest to `name` (edit distance at most 2, or one a prefix of the other), or ""
// when none is close.
inline std::string ClosestName(std::string_view name, const std::vector<std::string>& known) {
  constexpr size_t kLongest = 64;  // longer names are no misspelling of ours; skip the table
  std::string best;
  size_t best_distance = std::numeric_limits<size_t>::max();
  if (name.empty() || name.size() > kLongest) return best;
  for (const std::string& k : known) {
    size_t distance = EditDistance(name, k);
    bool prefix = k.starts_with(name) || name.starts_with(k);
    if ((distance <= 2 || prefix) && distance < best_distance) {
      best = k;
      best_distance = distance;
    }
  }
  return best;
}

// The names expressions may read: the sizes (integers, the only names a shape may use) and the
// settings (numbers), each with its default.
struct Names {
  std::vector<std::string> sizes;
  std::vector<std::string> settings;
  std::map<std::string, double> setting_defaults;

  std::vector<std::string> All() const {
    std::vector<std::string> all = sizes;
    all.insert(all.end(), settings.begin(), settings.end());
    return all;
  }
};

class TaskReader {
 public:
  explicit TaskReader(std::string file) : file_(std::move(file)) {}

  static int LineOf(const toml::node* node) {
    return node ? static_cast<int>(node->source().begin.line) : 0;
  }

  [[noreturn]] void Fail(const toml::node* node, const std::string& field,
                         const std::string& message) const {
    throw InputError(file_, LineOf(node), field, message);
  }

  // Fails on the first (by line) key of `t` that is not one of `known`, suggesting a close one.
  void CheckKeys(const toml::table& t, const std::vector<std::string>& known,
                 const std::string& prefix) const {
    std::optional<std::string> first;
    int first_line = 0;
    for (const auto& [k, v] : t) {
      if (Contains(known, k.str())) continue;
      int line = static_cast<int>(k.source().begin.line);
      if (line == 0) line = LineOf(&v);
      if (!first || line < first_line) {
        first = std::string(k.str());
        first_line = line;
      }
    }
    if (!first) return;
    std::string close = ClosestName(*first, known);
    std::string message = "unknown key '" + *first + "'";
    message += close.empty() ? " (the keys here: " + Joined(known) + ")"
                             : "; did you mean '" + close + "'?";
    throw InputError(file_, first_line, prefix + *first, message);
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

  double NumberOf(const toml::node& n, const std::string& field) const {
    double v = 0;
    if (n.is_integer()) {
      v = static_cast<double>(n.as_integer()->get());
    } else if (n.is_floating_point()) {
      v = n.as_floating_point()->get();
    } else {
      Fail(&n, field, "expected a number");
    }
    if (!std::isfinite(v)) Fail(&n, field, "expected a finite number");
    return v;
  }

  double Number(const toml::table& t, const std::string& key, const std::string& field,
                double fallback) const {
    const toml::node* n = t.get(key);
    return n ? NumberOf(*n, field) : fallback;
  }

  // An expression given as a string or a plain number.
  Expr ExprOf(const toml::node* n, const std::string& field) const {
    std::string text;
    if (n->is_string()) {
      text = std::string(n->as_string()->get());
    } else if (n->is_integer()) {
      text = std::to_string(n->as_integer()->get());
    } else if (n->is_floating_point() && std::isfinite(n->as_floating_point()->get())) {
      text = fmt::format("{}", n->as_floating_point()->get());
    } else {
      Fail(n, field, "expected an expression (a string or a finite number)");
    }
    if (text.size() > kMaxExprLength)
      Fail(n, field, fmt::format("longer than {} characters", kMaxExprLength));
    try {
      return Expr::Parse(text);
    } catch (const ExprError& e) {
      Fail(n, field, e.what());
    }
  }

  // Checks that every name `e` reads is one of `allowed`.
  void CheckNames(const Expr& e, const std::vector<std::string>& allowed, const Names& names,
                  const toml::node* n, const std::string& field) const {
    for (const std::string& v : e.Variables()) {
      if (Contains(allowed, v)) continue;
      if (Contains(names.settings, v))
        Fail(n, field, fmt::format("'{}' is a setting, not a size: shapes take sizes only", v));
      Fail(n, field,
           fmt::format("'{}' names '{}', which is not a declared size{}", e.text(), v,
                       names.settings.empty() ? "" : " or setting"));
    }
  }

 private:
  std::string file_;
};

}  // namespace kf::task_reader
