#include "core/kernel.hpp"

#include <fmt/format.h>

#include <algorithm>
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

// Reads the annotation lines of one file. With one @kernel the launch rule may stand anywhere in
// the file (as it always could); with several, each @grid/@block/@shared belongs to the @kernel
// above it.
class AnnotationParser {
 public:
  AnnotationParser(Kernel& kernel, bool several) : k_(kernel), several_(several) {
    if (!several_) k_.launches.emplace_back();
  }

  void Line(int line_no, std::string_view directive, std::string_view rest) {
    line_ = line_no;
    directive_ = std::string(directive);
    std::string body = Trim(rest);
    if (directive == "kernel") {
      if (!IsIdentifier(body)) Fail("expected an entry-point name, got '" + body + "'");
      for (const LaunchRule& other : k_.launches) {
        if (other.entry == body) Fail("entry point '" + body + "' declared twice");
      }
      if (several_) k_.launches.emplace_back();
      if (!k_.launches.back().entry.empty()) Fail("entry point declared twice");
      k_.launches.back().entry = body;
      k_.launches.back().entry_line = line_no;
    } else if (directive == "grid" || directive == "block") {
      LaunchRule& l = Current();
      auto& dims = directive == "grid" ? l.grid : l.block;
      if (!dims.empty()) Fail("declared twice");
      for (const std::string& part : SplitTopLevel(body)) dims.push_back(ParseExpr(part));
      if (dims.empty() || dims.size() > 3) Fail("expected 1 to 3 comma-separated expressions");
      (directive == "grid" ? l.grid_line : l.block_line) = line_no;
    } else if (directive == "shared") {
      LaunchRule& l = Current();
      if (k_.language != Language::kCuda) {
        Fail(
            "dynamic shared memory is CUDA only; an OpenCL kernel declares its __local arrays "
            "with a size known at compile time (a @param)");
      }
      if (l.shared) Fail("declared twice");
      std::vector<std::string> parts = SplitTopLevel(body);
      if (parts.size() != 1) Fail("expected one expression: the bytes per block");
      l.shared = ParseExpr(parts[0]);
      l.shared_line = line_no;
    } else if (directive == "scratch") {
      ParseScratch(body);
    } else if (directive == "param") {
      ParseParam(body);
    } else if (directive == "constraint") {
      k_.constraints.push_back(ParseExpr(body));
      k_.constraint_lines.push_back(line_no);
    } else {
      Fail(
          "unknown annotation (expected @kernel, @grid, @block, @shared, @scratch, @param or "
          "@constraint)");
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

  // The launch a @grid, @block or @shared line belongs to.
  LaunchRule& Current() const {
    if (k_.launches.empty()) {
      Fail(
          "comes before any @kernel: in a file of several launches, each @grid, @block and "
          "@shared follows the @kernel it belongs to");
    }
    return k_.launches.back();
  }

  // NAME TYPE COUNT: a scratch buffer of COUNT elements of TYPE.
  void ParseScratch(const std::string& body) {
    std::istringstream in(body);
    ScratchSpec scratch;
    scratch.line = line_;
    std::string type;
    in >> scratch.name >> type;
    if (!IsIdentifier(scratch.name)) Fail("expected 'NAME TYPE COUNT', got '" + body + "'");
    std::optional<DType> dtype = ParseDType(type);
    if (!dtype)
      Fail("unknown element type '" + type + "' of scratch buffer '" + scratch.name + "'");
    scratch.dtype = *dtype;
    std::string count;
    std::getline(in, count);
    scratch.count = ParseExpr(Trim(count));
    for (const ScratchSpec& other : k_.scratch) {
      if (other.name == scratch.name) Fail("scratch buffer '" + scratch.name + "' declared twice");
    }
    k_.scratch.push_back(std::move(scratch));
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
      // In unsigned arithmetic: the span of two 64-bit bounds may not fit in a signed one.
      auto span = static_cast<unsigned long long>(b) - static_cast<unsigned long long>(a);
      auto ustep = static_cast<unsigned long long>(step);
      if (span / ustep > 1000000) Fail("range() too large to list (over 10^6 values)");
      unsigned long long count = span / ustep + (span % ustep != 0);
      for (unsigned long long k = 0; k < count; ++k)
        p.values.push_back(
            std::to_string(static_cast<long long>(static_cast<unsigned long long>(a) + k * ustep)));
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
  bool several_;
  int line_ = 0;
  std::string directive_;
};

// The 1-based line of `offset` in `source`.
int LineAt(const std::string& source, size_t offset) {
  return 1 + static_cast<int>(std::count(source.begin(), source.begin() + offset, '\n'));
}

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// The entry point's definition line, and the last identifier of each of its parameters with
// its line.
void FindEntryArgs(const std::string& source, LaunchRule& k) {
  std::optional<std::pair<size_t, size_t>> list = EntryParamList(source, k.entry);
  if (!list) return;
  k.definition_line = LineAt(source, list->first);
  // Each top-level comma ends a parameter; its name is the last identifier before it.
  auto add_name = [&](size_t end) {
    size_t e = end;
    while (e > list->first && !IsWordChar(source[e - 1])) --e;
    size_t b = e;
    while (b > list->first && IsWordChar(source[b - 1])) --b;
    if (e == b) return;
    k.arg_names.push_back(source.substr(b, e - b));
    k.arg_lines.push_back(LineAt(source, b));
  };
  int depth = 0;
  for (size_t i = list->first; i < list->second; ++i) {
    char c = source[i];
    if (c == '(' || c == '[' || c == '<') ++depth;
    if (c == ')' || c == ']' || c == '>') --depth;
    if (c == ',' && depth == 0) add_name(i);
  }
  add_name(list->second);
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "(none)" : out;
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

std::optional<Language> LanguageOfPath(const std::string& path) {
  std::string ext = path.size() > 3 ? path.substr(path.size() - 3) : "";
  if (ext == ".cu") return Language::kCuda;
  if (ext == ".cl") return Language::kOpenCL;
  return std::nullopt;
}

Kernel ParseKernel(const std::string& path, std::string source) {
  Kernel k;
  k.path = path;
  k.source = std::move(source);
  std::optional<Language> language = LanguageOfPath(path);
  if (!language)
    throw InputError(path, 0, "file name",
                     "kernel sources end in .cu (CUDA C++) or .cl (OpenCL C)");
  k.language = *language;
  struct Annotation {
    int line;
    std::string directive, rest;
  };
  std::vector<Annotation> annotations;
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
    annotations.push_back({line_no, line.substr(at + 1, word_end - at - 1), line.substr(word_end)});
  }
  const auto kernels = std::count_if(annotations.begin(), annotations.end(),
                                     [](const Annotation& a) { return a.directive == "kernel"; });
  AnnotationParser parser(k, kernels > 1);
  for (const Annotation& a : annotations) parser.Line(a.line, a.directive, a.rest);
  if (k.launches.empty() || k.launches.front().entry.empty())
    throw InputError(path, 0, "@kernel", "no '// @kernel NAME' annotation naming the entry point");
  for (LaunchRule& l : k.launches) {
    const std::string which = k.launches.size() > 1 ? " for entry point " + l.entry : "";
    if (l.grid.empty())
      throw InputError(path, l.entry_line, "@grid", "no '// @grid ...' launch rule" + which);
    if (l.block.empty())
      throw InputError(path, l.entry_line, "@block", "no '// @block ...' launch rule" + which);
    if (l.grid.size() != l.block.size()) {
      throw InputError(path, l.grid_line, "@grid",
                       "grid and block must have the same number of dimensions");
    }
    FindEntryArgs(k.source, l);
  }
  return k;
}

std::string Kernel::EntryNames() const {
  std::string out;
  for (const LaunchRule& l : launches) out += (out.empty() ? "" : ",") + l.entry;
  return out;
}

CompileRequest CompileRequestFor(const Kernel& kernel, const Config& config,
                                 const Config& task_defines) {
  CompileRequest request;
  request.source = kernel.source;
  for (const LaunchRule& l : kernel.launches) request.entries.push_back(l.entry);
  request.defines.assign(task_defines.begin(), task_defines.end());
  request.defines.insert(request.defines.end(), config.begin(), config.end());
  return request;
}

void CheckEntryArgs(const Kernel& kernel, const std::vector<std::string>& task_args,
                    const std::string& owner) {
  std::vector<std::string> args = task_args;
  for (const ScratchSpec& s : kernel.scratch) args.push_back(s.name);
  const std::string passes =
      kernel.scratch.empty() ? owner : owner + " and the kernel's @scratch buffers";
  for (const LaunchRule& launch : kernel.launches) {
    const std::string field = "entry point " + launch.entry;
    if (launch.definition_line == 0) {
      throw InputError(kernel.path, launch.entry_line, field,
                       "no kernel definition named '" + launch.entry + "' was found");
    }
    if (launch.arg_names.size() != args.size()) {
      throw InputError(kernel.path, launch.definition_line, field,
                       fmt::format("takes {} arguments; {} pass{} {}", launch.arg_names.size(),
                                   passes, kernel.scratch.empty() ? "es" : "", args.size()));
    }
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& want = args[i];
      const std::string& got = launch.arg_names[i];
      bool ok = got == want || (got.size() > want.size() &&
                                got.compare(0, want.size(), want) == 0 && got[want.size()] == '_');
      if (!ok) {
        throw InputError(kernel.path, launch.arg_lines[i], field,
                         fmt::format("argument {} is '{}'; the {} passes '{}' there", i + 1, got,
                                     i < task_args.size() ? "task" : "kernel's @scratch", want));
      }
    }
  }
}

void CheckKernelNames(const Kernel& kernel, const std::vector<std::string>& sizes,
                      const std::vector<std::string>& constraint_extras) {
  std::vector<std::string> known = sizes;
  for (const ParamSpec& p : kernel.params) known.push_back(p.name);
  auto check = [&](const Expr& e, const std::vector<std::string>& names, int line,
                   const char* field, const std::string& which) {
    try {
      e.RequireNames(names);
    } catch (const ExprError& error) {
      throw InputError(kernel.path, line, field,
                       fmt::format("{}; {} may read {}", error.what(), which, JoinNames(names)));
    }
  };
  for (const LaunchRule& l : kernel.launches) {
    for (const Expr& e : l.grid) check(e, known, l.grid_line, "@grid", "a launch rule");
    for (const Expr& e : l.block) check(e, known, l.block_line, "@block", "a launch rule");
    if (l.shared) check(*l.shared, known, l.shared_line, "@shared", "a launch rule");
  }
  for (const ScratchSpec& s : kernel.scratch)
    check(s.count, known, s.line, "@scratch", "a scratch size");
  std::vector<std::string> constraint_names = known;
  constraint_names.insert(constraint_names.end(), constraint_extras.begin(),
                          constraint_extras.end());
  for (size_t i = 0; i < kernel.constraints.size(); ++i) {
    check(kernel.constraints[i], constraint_names, kernel.constraint_lines[i], "@constraint",
          "a constraint");
  }
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
