#include "search/macro_expand.hpp"

#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <vector>

namespace kf {

namespace {

struct Token {
  std::string text;
  bool ident = false;
  bool space = false;  // whitespace (kept, so the expanded code still reads like code)
};

using Tokens = std::vector<Token>;

Tokens Tokenize(const std::string& s) {
  Tokens out;
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t j = i + 1;
    Token t;
    if (std::isalpha(c) || c == '_') {
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      t.ident = true;
    } else if (std::isdigit(c)) {
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '.')) ++j;
    } else if (std::isspace(c)) {
      while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
      t.space = true;
    } else if (c == '"' || c == '\'') {
      while (j < s.size() && s[j] != s[i]) j += s[j] == '\\' ? 2 : 1;
      j = std::min(j + 1, s.size());
    } else if (c == '#' && j < s.size() && s[j] == '#') {
      ++j;
    }
    t.text = s.substr(i, j - i);
    out.push_back(std::move(t));
    i = j;
  }
  return out;
}

struct Macro {
  bool function = false;
  std::vector<std::string> params;
  Tokens body;
};

using Macros = std::map<std::string, Macro>;

size_t NextNonSpace(const Tokens& t, size_t i) {
  while (i < t.size() && t[i].space) ++i;
  return i;
}

// The arguments of a call whose '(' is at `open`; `end` is set past its ')'. None when unclosed.
std::optional<std::vector<Tokens>> Arguments(const Tokens& t, size_t open, size_t& end) {
  std::vector<Tokens> args(1);
  int depth = 0;
  for (size_t i = open + 1; i < t.size(); ++i) {
    const std::string& x = t[i].text;
    if (x == "(") ++depth;
    if (x == ")" && depth-- == 0) {
      end = i + 1;
      return args;
    }
    if (x == "," && depth == 0) {
      args.emplace_back();
    } else {
      args.back().push_back(t[i]);
    }
  }
  return std::nullopt;
}

std::string Text(const Tokens& t) {
  std::string out;
  for (const Token& x : t) out += x.text;
  return out;
}

Tokens Trim(Tokens t) {
  while (!t.empty() && t.front().space) t.erase(t.begin());
  while (!t.empty() && t.back().space) t.pop_back();
  return t;
}

Tokens Expand(const Tokens& in, const Macros& macros, const std::set<std::string>& disabled,
              int depth);

// A function-like macro's body with its arguments in: pasted ones raw, the others expanded.
Tokens Substitute(const Macro& m, const std::vector<Tokens>& args, const Macros& macros,
                  const std::set<std::string>& disabled, int depth) {
  auto param = [&](const std::string& name) -> int {
    for (size_t p = 0; p < m.params.size(); ++p)
      if (m.params[p] == name) return static_cast<int>(p);
    return -1;
  };
  Tokens out;
  const Tokens& b = m.body;
  for (size_t i = 0; i < b.size(); ++i) {
    int p = b[i].ident ? param(b[i].text) : -1;
    if (b[i].text == "#" && i + 1 < b.size() && param(b[NextNonSpace(b, i + 1)].text) >= 0) {
      size_t k = NextNonSpace(b, i + 1);
      out.push_back({"\"" + Text(Trim(args[param(b[k].text)])) + "\"", false, false});
      i = k;
      continue;
    }
    if (p < 0 || p >= static_cast<int>(args.size())) {
      out.push_back(b[i]);
      continue;
    }
    auto neighbour_is_paste = [&](bool before) {
      if (before) {
        for (size_t k = i; k-- > 0;)
          if (!b[k].space) return b[k].text == "##";
        return false;
      }
      size_t k = NextNonSpace(b, i + 1);
      return k < b.size() && b[k].text == "##";
    };
    Tokens arg = Trim(args[p]);
    if (neighbour_is_paste(true) || neighbour_is_paste(false)) {
      out.insert(out.end(), arg.begin(), arg.end());
    } else {
      Tokens e = Expand(arg, macros, disabled, depth + 1);
      out.insert(out.end(), e.begin(), e.end());
    }
  }
  // Pasting: the tokens either side of ## become one.
  Tokens pasted;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].text != "##") {
      pasted.push_back(out[i]);
      continue;
    }
    while (!pasted.empty() && pasted.back().space) pasted.pop_back();
    size_t k = NextNonSpace(out, i + 1);
    std::string joined =
        (pasted.empty() ? "" : pasted.back().text) + (k < out.size() ? out[k].text : "");
    if (!pasted.empty()) pasted.pop_back();
    Tokens re = Tokenize(joined);
    pasted.insert(pasted.end(), re.begin(), re.end());
    i = k;
  }
  return pasted;
}

Tokens Expand(const Tokens& in, const Macros& macros, const std::set<std::string>& disabled,
              int depth) {
  if (depth > 64) return in;  // a runaway definition: leave the rest as written
  Tokens out;
  for (size_t i = 0; i < in.size(); ++i) {
    const Token& t = in[i];
    auto it = t.ident && !disabled.count(t.text) ? macros.find(t.text) : macros.end();
    if (it == macros.end()) {
      out.push_back(t);
      continue;
    }
    const Macro& m = it->second;
    std::set<std::string> inner = disabled;
    inner.insert(t.text);
    if (!m.function) {
      Tokens e = Expand(m.body, macros, inner, depth + 1);
      out.insert(out.end(), e.begin(), e.end());
      continue;
    }
    size_t open = NextNonSpace(in, i + 1), end = 0;
    std::optional<std::vector<Tokens>> args;
    if (open < in.size() && in[open].text == "(") args = Arguments(in, open, end);
    if (!args) {  // a function-like macro's name without a call is just a name
      out.push_back(t);
      continue;
    }
    Tokens e = Expand(Substitute(m, *args, macros, disabled, depth), macros, inner, depth + 1);
    out.insert(out.end(), e.begin(), e.end());
    i = end - 1;
  }
  return out;
}

// A "#define ..." line (continuations joined) into the table.
void Define(const std::string& line, Macros& macros) {
  Tokens t = Tokenize(line);
  size_t i = NextNonSpace(t, 0);  // '#'
  i = NextNonSpace(t, i + 1);     // 'define'
  i = NextNonSpace(t, i + 1);
  if (i >= t.size() || !t[i].ident) return;
  std::string name = t[i].text;
  Macro m;
  size_t j = i + 1;
  if (j < t.size() && t[j].text == "(") {  // no space before '(': function-like
    m.function = true;
    for (++j; j < t.size() && t[j].text != ")"; ++j)
      if (t[j].ident || t[j].text == "...") m.params.push_back(t[j].text);
    ++j;
  }
  m.body = Trim(Tokens(t.begin() + static_cast<long>(std::min(j, t.size())), t.end()));
  macros[name] = std::move(m);
}

}  // namespace

std::string ExpandMacros(const std::string& code, const Config& defines) {
  Macros macros;
  for (const auto& [name, value] : defines) macros[name] = {false, {}, Tokenize(value)};
  std::string rest;
  std::vector<std::string> directives;  // directive lines other than #define, by marker number
  size_t pos = 0;
  while (pos < code.size()) {
    size_t eol = code.find('\n', pos);
    if (eol == std::string::npos) eol = code.size();
    std::string line = code.substr(pos, eol - pos);
    while (!line.empty() && line.back() == '\\' && eol < code.size()) {  // continued
      line.pop_back();
      size_t next = code.find('\n', eol + 1);
      if (next == std::string::npos) next = code.size();
      line += code.substr(eol + 1, next - eol - 1);
      eol = next;
    }
    size_t first = line.find_first_not_of(" \t");
    size_t word = first == std::string::npos ? first : line.find_first_not_of(" \t", first + 1);
    bool define = first != std::string::npos && line[first] == '#' && word != std::string::npos &&
                  line.compare(word, 6, "define") == 0;
    if (define) {
      // A -D value wins over the source's own default (`#ifndef VEC / #define VEC 4`).
      Macros from_source;
      Define(line.substr(first), from_source);
      for (auto& [name, m] : from_source)
        if (!defines.count(name)) macros[name] = std::move(m);
      rest += "\n";
    } else if (first != std::string::npos && line[first] == '#') {
      // Other directives (#ifndef VEC, #pragma unroll) are kept as written, unexpanded.
      rest += "\x01" + std::to_string(directives.size()) + "\x01\n";
      directives.push_back(line);
    } else {
      rest += line + "\n";
    }
    pos = eol + 1;
  }
  std::string out = Text(Expand(Tokenize(rest), macros, {}, 0));
  for (size_t n = 0; n < directives.size(); ++n) {
    std::string marker = "\x01" + std::to_string(n) + "\x01";
    if (size_t at = out.find(marker); at != std::string::npos)
      out.replace(at, marker.size(), directives[n]);
  }
  return out;
}

}  // namespace kf
