#include "core/kernel.hpp"

#include <fmt/format.h>

#include <cctype>
#include <fstream>
#include <sstream>

#include "core/input_error.hpp"

namespace kf {

std::string_view LanguageName(Language lang) {
  return lang == Language::kCuda ? "cuda" : "opencl";
}

std::string ConfigToString(const Config& config) {
  std::string out = "{";
  for (const auto& [k, v] : config) {
    if (out.size() > 1) out += ", ";
    out += k + ": " + v;
  }
  return out + "}";
}

namespace {

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

bool IsIdentifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

// Splits on commas that are not inside parentheses or brackets.
std::vector<std::string> SplitTopLevel(std::string_view s) {
  std::vector<std::string> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '(' || c == '[' || c == '<') ++depth;
    if (c == ')' || c == ']' || c == '>') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(Trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  std::string last = Trim(s.substr(start));
  if (!last.empty() || !out.empty()) out.push_back(last);
  return out;
}

class AnnotationParser {
 public:
  AnnotationParser(Kernel& kernel) : k_(kernel) {}

  void Line(int line_no, std::string_view directive, std::string_view rest) {
    line_ = line_no;
    directive_ = std::string(directive);
    std::string body = Trim(rest);
    if (directive == "kernel") {
      if (!IsIdentifier(body)) Fail("expected an entry-point name, got '" + body + "'");
      if (!k_.entry.empty()) Fail("entry point declared twice");
      k_.entry = body;
    } else if (directive == "grid" || directive == "block") {
      auto& dims = directive == "grid" ? k_.grid : k_.block;
      if (!dims.empty()) Fail("declared twice");
      for (const std::string& part : SplitTopLevel(body)) dims.push_back(ParseExpr(part));
      if (dims.empty() || dims.size() > 3) Fail("expected 1 to 3 comma-separated expressions");
    } else if (directive == "param") {
      ParseParam(body);
    } else if (directive == "constraint") {
      k_.constraints.push_back(ParseExpr(body));
    } else {
      Fail("unknown annotation (expected @kernel, @grid, @block, @param or @constraint)");
    }
  }

  [[noreturn]] void Fail(const std::string& message) const {
    throw InputError(k_.path, line_, "@" + directive_, message);
  }

 private:
  Expr ParseExpr(const std::string& text) const {
    if (text.empty()) Fail("empty expression");
    try {
      return Expr::Parse(text);
    } catch (const ExprError& e) {
      Fail(e.what());
    }
  }

  // NAME in [v1, v2, ...] [default V]   or   NAME in range(a, b[, step]) [default V]
  void ParseParam(const std::string& body) {
    std::istringstream in(body);
    ParamSpec p;
    p.line = line_;
    std::string word;
    in >> p.name >> word;
    if (!IsIdentifier(p.name)) Fail("expected a parameter name, got '" + p.name + "'");
    if (word != "in") Fail("expected 'NAME in [values]' or 'NAME in range(a, b)'");
    std::string rest;
    std::getline(in, rest);
    rest = Trim(rest);
    size_t default_at = rest.rfind(" default ");
    std::string values_text =
        Trim(default_at == std::string::npos ? rest : rest.substr(0, default_at));
    if (values_text.rfind("range(", 0) == 0 && values_text.back() == ')') {
      std::vector<std::string> bounds =
          SplitTopLevel(values_text.substr(6, values_text.size() - 7));
      if (bounds.size() < 2 || bounds.size() > 3) Fail("range() takes (start, stop[, step])");
      long long a, b, step = 1;
      try {
        a = std::stoll(bounds[0]);
        b = std::stoll(bounds[1]);
        if (bounds.size() == 3) step = std::stoll(bounds[2]);
      } catch (const std::exception&) {
        Fail("range() bounds must be integers");
      }
      if (step <= 0 || b <= a) Fail("range() must be non-empty with a positive step");
      if ((b - a) / step > 1000000) Fail("range() too large to list (over 10^6 values)");
      for (long long v = a; v < b; v += step) p.values.push_back(std::to_string(v));
    } else if (values_text.size() >= 2 && values_text.front() == '[' && values_text.back() == ']') {
      for (const std::string& v : SplitTopLevel(values_text.substr(1, values_text.size() - 2))) {
        if (v.empty()) Fail("empty value in list");
        p.values.push_back(v);
      }
    } else {
      Fail("expected [v1, v2, ...] or range(a, b) after 'in'");
    }
    if (p.values.empty()) Fail("parameter '" + p.name + "' has no values");
    p.default_value = p.values.front();
    if (default_at != std::string::npos) {
      p.default_value = Trim(rest.substr(default_at + 9));
      bool found = false;
      for (const auto& v : p.values) found = found || v == p.default_value;
      if (!found) Fail("default " + p.default_value + " is not among the values of " + p.name);
    }
    for (const auto& other : k_.params) {
      if (other.name == p.name) Fail("parameter '" + p.name + "' declared twice");
    }
    k_.params.push_back(std::move(p));
  }

  Kernel& k_;
  int line_ = 0;
  std::string directive_;
};

// The last identifier of each of the entry point's parameters.
std::vector<std::string> EntryArgNames(const std::string& source, const std::string& entry) {
  std::optional<std::pair<size_t, size_t>> list = EntryParamList(source, entry);
  if (!list) return {};
  std::vector<std::string> names;
  for (const std::string& param :
       SplitTopLevel(std::string_view(source).substr(list->first, list->second - list->first))) {
    size_t e = param.size();
    while (e > 0 &&
           !(std::isalnum(static_cast<unsigned char>(param[e - 1])) || param[e - 1] == '_'))
      --e;
    size_t b = e;
    while (b > 0 && (std::isalnum(static_cast<unsigned char>(param[b - 1])) || param[b - 1] == '_'))
      --b;
    if (e > b) names.push_back(param.substr(b, e - b));
  }
  return names;
}

}  // namespace

std::optional<std::pair<size_t, size_t>> EntryParamList(const std::string& source,
                                                        const std::string& entry) {
  size_t pos = 0;
  while ((pos = source.find(entry, pos)) != std::string::npos) {
    bool starts = pos == 0 || !(std::isalnum(static_cast<unsigned char>(source[pos - 1])) ||
                                source[pos - 1] == '_');
    size_t after = pos + entry.size();
    while (after < source.size() && std::isspace(static_cast<unsigned char>(source[after])))
      ++after;
    if (starts && after < source.size() && source[after] == '(') {
      // Only a definition: the name must be preceded by a kernel qualifier on the same declaration.
      size_t decl_start = source.rfind(';', pos);
      size_t brace = source.rfind('}', pos);
      if (brace != std::string::npos && (decl_start == std::string::npos || brace > decl_start))
        decl_start = brace;
      std::string head = source.substr(decl_start == std::string::npos ? 0 : decl_start,
                                       pos - (decl_start == std::string::npos ? 0 : decl_start));
      if (head.find("__global__") != std::string::npos ||
          head.find("__kernel") != std::string::npos || head.find("kernel ") != std::string::npos) {
        int depth = 0;
        size_t end = after;
        for (; end < source.size(); ++end) {
          if (source[end] == '(') ++depth;
          if (source[end] == ')' && --depth == 0) break;
        }
        return std::pair(after + 1, end);
      }
    }
    pos += entry.size();
  }
  return std::nullopt;
}

Kernel ParseKernel(const std::string& path, std::string source) {
  Kernel k;
  k.path = path;
  k.source = std::move(source);
  if (path.size() > 3 && path.substr(path.size() - 3) == ".cu") {
    k.language = Language::kCuda;
  } else if (path.size() > 3 && path.substr(path.size() - 3) == ".cl") {
    k.language = Language::kOpenCL;
  } else {
    throw InputError(path, 0, "file name",
                     "kernel sources end in .cu (CUDA C++) or .cl (OpenCL C)");
  }
  AnnotationParser parser(k);
  std::istringstream lines(k.source);
  std::string line;
  int line_no = 0;
  while (std::getline(lines, line)) {
    ++line_no;
    size_t comment = line.find("//");
    size_t at = line.find('@', comment == std::string::npos ? 0 : comment);
    if (comment == std::string::npos || at == std::string::npos) continue;
    if (Trim(std::string_view(line).substr(comment + 2, at - comment - 2)) != "") continue;
    size_t word_end = at + 1;
    while (word_end < line.size() && std::isalpha(static_cast<unsigned char>(line[word_end])))
      ++word_end;
    parser.Line(line_no, std::string_view(line).substr(at + 1, word_end - at - 1),
                std::string_view(line).substr(word_end));
  }
  if (k.entry.empty())
    throw InputError(path, 0, "@kernel", "no '// @kernel NAME' annotation naming the entry point");
  if (k.grid.empty()) throw InputError(path, 0, "@grid", "no '// @grid ...' launch rule");
  if (k.block.empty()) throw InputError(path, 0, "@block", "no '// @block ...' launch rule");
  if (k.grid.size() != k.block.size()) {
    throw InputError(path, 0, "@grid", "grid and block must have the same number of dimensions");
  }
  k.arg_names = EntryArgNames(k.source, k.entry);
  return k;
}

Kernel LoadKernelFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "file", "cannot read kernel source");
  std::ostringstream text;
  text << in.rdbuf();
  return ParseKernel(path, text.str());
}

std::string WithParams(const Kernel& kernel, const std::vector<ParamSpec>& params) {
  std::istringstream in(kernel.source);
  std::string out, line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    for (const ParamSpec& own : kernel.params) {
      if (own.line != line_no) continue;
      for (const ParamSpec& p : params) {
        if (p.name != own.name) continue;
        std::string values;
        for (const std::string& v : p.values) values += (values.empty() ? "" : ", ") + v;
        line = line.substr(0, line.find("@param")) +
               fmt::format("@param {} in [{}] default {}", p.name, values, p.default_value);
      }
    }
    out += line + "\n";
  }
  return out;
}

std::string WithDefaults(const Kernel& kernel, const Config& config) {
  std::vector<ParamSpec> params = kernel.params;
  for (ParamSpec& p : params) {
    auto it = config.find(p.name);
    if (it != config.end()) p.default_value = it->second;
  }
  return WithParams(kernel, params);
}

Config Kernel::ResolveConfig(const Config& overrides) const {
  Config config;
  for (const auto& p : params) config[p.name] = p.default_value;
  for (const auto& [name, value] : overrides) {
    const ParamSpec* spec = nullptr;
    for (const auto& p : params) {
      if (p.name == name) spec = &p;
    }
    if (!spec)
      throw InputError(path, 0, "--set " + name,
                       "the kernel declares no @param named '" + name + "'");
    bool allowed = false;
    for (const auto& v : spec->values) allowed = allowed || v == value;
    if (!allowed) {
      throw InputError(path, spec->line, "@param " + name,
                       "value '" + value + "' is not among the declared values");
    }
    config[name] = value;
  }
  return config;
}

void BindConfig(const Config& config, Env& env) {
  for (const auto& [name, value] : config) {
    char* end = nullptr;
    double v = std::strtod(value.c_str(), &end);
    env.Set(name, (end && *end == '\0') ? v : 0.0);
  }
}

}  // namespace kf
