#include "propose/builtin/mutations.hpp"

#include <algorithm>
#include <functional>
#include <regex>
#include <sstream>

namespace kf {

namespace {

bool IsCuda(const Kernel& k) {
  return k.language == Language::kCuda;
}

// Splits a parameter list on its top-level commas, keeping every character (unlike the
// annotation parser's splitter, which trims), so the list can be joined back as it was.
std::vector<std::string> SplitParams(const std::string& list) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : list) {
    if (c == '(' || c == '<') ++depth;
    if (c == ')' || c == '>') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

// Rewrites each pointer parameter of the entry with `edit(param text, parameter name)`.
std::optional<std::string> EditPointerParams(
    const Kernel& k,
    const std::function<std::optional<std::string>(const std::string&, size_t)>& edit) {
  if (k.launches.size() != 1) return std::nullopt;  // one entry point's parameters
  auto range = EntryParamList(k.source, k.launches.front().entry);
  if (!range) return std::nullopt;
  std::vector<std::string> params =
      SplitParams(k.source.substr(range->first, range->second - range->first));
  bool changed = false;
  std::string joined;
  for (size_t i = 0; i < params.size(); ++i) {
    std::string p = params[i];
    if (p.find('*') != std::string::npos) {
      if (std::optional<std::string> e = edit(p, i)) {
        p = *e;
        changed = true;
      }
    }
    joined += (i ? "," : "") + p;
  }
  if (!changed) return std::nullopt;
  return k.source.substr(0, range->first) + joined + k.source.substr(range->second);
}

std::optional<std::string> Unroll(const Kernel& k, const Task&) {
  std::istringstream in(k.source);
  std::string line, out, previous;
  bool done = false, in_body = false;
  std::regex loop("^\\s*for\\s*\\(");
  while (std::getline(in, line)) {
    if (line.find('{') != std::string::npos) in_body = true;
    if (!done && in_body && std::regex_search(line, loop) &&
        previous.find("#pragma unroll") == std::string::npos &&
        previous.find("opencl_unroll_hint") == std::string::npos) {
      size_t indent = line.find_first_not_of(" \t");
      out += line.substr(0, indent) + "#pragma unroll\n";
      done = true;
    }
    out += line + "\n";
    if (line.find_first_not_of(" \t") != std::string::npos) previous = line;
  }
  if (!done) return std::nullopt;
  return out;
}

// The parameter that is the whole 1-D block size, if there is one.
std::optional<std::string> BlockParam(const Kernel& k) {
  if (k.launches.size() != 1 || k.launches.front().block.size() != 1) return std::nullopt;
  std::string b = k.launches.front().block[0].text();
  for (const ParamSpec& p : k.params) {
    if (p.name == b) return b;
  }
  return std::nullopt;
}

std::optional<std::string> LaunchBounds(const Kernel& k, const Task&) {
  std::optional<std::string> block = BlockParam(k);
  if (!block) return std::nullopt;
  if (IsCuda(k)) {
    if (k.source.find("__launch_bounds__") != std::string::npos) return std::nullopt;
    size_t at = k.source.find("__global__ void");
    if (at == std::string::npos) return std::nullopt;
    std::string s = k.source;
    s.replace(at, 15, "__global__ void __launch_bounds__(" + *block + ")");
    return s;
  }
  if (k.source.find("reqd_work_group_size") != std::string::npos) return std::nullopt;
  size_t at = k.source.find("__kernel void");
  if (at == std::string::npos) return std::nullopt;
  std::string s = k.source;
  s.replace(at, 13, "__kernel __attribute__((reqd_work_group_size(" + *block + ", 1, 1))) void");
  return s;
}

std::optional<std::string> Restrict(const Kernel& k, const Task&) {
  const std::string word = IsCuda(k) ? "__restrict__" : "restrict";
  return EditPointerParams(k, [&](const std::string& p, size_t) -> std::optional<std::string> {
    if (p.find("restrict") != std::string::npos) return std::nullopt;
    size_t star = p.rfind('*');
    return p.substr(0, star + 1) + " " + word + p.substr(star + 1);
  });
}

std::optional<std::string> Const(const Kernel& k, const Task& task) {
  return EditPointerParams(k, [&](const std::string& p, size_t i) -> std::optional<std::string> {
    // The task's arguments match the entry's parameters by position.
    if (i >= task.args.size() || task.args[i].role != ArgRole::kIn) return std::nullopt;
    if (std::regex_search(p, std::regex("\\bconst\\b"))) return std::nullopt;
    // After an address-space qualifier (__global), before the element type.
    std::smatch m;
    if (std::regex_search(p, m, std::regex("(__global|global|__constant)\\s+"))) {
      size_t at = static_cast<size_t>(m.position(0) + m.length(0));
      return p.substr(0, at) + "const " + p.substr(at);
    }
    size_t type = p.find_first_not_of(" \t\n");
    return p.substr(0, type) + "const " + p.substr(type);
  });
}

bool AllIntegers(const ParamSpec& p) {
  return std::all_of(p.values.begin(), p.values.end(), [](const std::string& v) {
    return !v.empty() && std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(c); });
  });
}

std::optional<std::string> Widen(const Kernel& k, const std::regex& name, bool both_ways) {
  std::vector<ParamSpec> params = k.params;
  for (ParamSpec& p : params) {
    if (!std::regex_search(p.name, name) || !AllIntegers(p)) continue;
    long long lo = std::stoll(p.values.front()), hi = lo;
    for (const std::string& v : p.values) {
      lo = std::min(lo, std::stoll(v));
      hi = std::max(hi, std::stoll(v));
    }
    bool changed = false;
    if (hi * 2 <= 4096) {
      p.values.push_back(std::to_string(hi * 2));
      changed = true;
    }
    if (both_ways && lo / 2 >= 1 && lo % 2 == 0) {
      p.values.insert(p.values.begin(), std::to_string(lo / 2));
      changed = true;
    }
    if (changed) return WithParams(k, params);
  }
  return std::nullopt;
}

std::optional<std::string> VectorWidth(const Kernel& k, const Task&) {
  return Widen(k, std::regex("^(VEC|VW|WIDTH|VECTOR)"), false);
}

std::optional<std::string> WorkPerThread(const Kernel& k, const Task&) {
  return Widen(k, std::regex("^(HPT|ITEMS|WPT|PER_THREAD|TILE|ROWS|ELEMS)"), false);
}

std::optional<std::string> BlockSize(const Kernel& k, const Task&) {
  std::optional<std::string> block = BlockParam(k);
  if (!block) return std::nullopt;
  return Widen(k, std::regex("^" + *block + "$"), true);
}

}  // namespace

const std::vector<Mutation>& Mutations() {
  static const std::vector<Mutation> all = {
      {"unroll", Unroll},
      {"launch_bounds", LaunchBounds},
      {"restrict", Restrict},
      {"const", Const},
      {"vector_width", VectorWidth},
      {"work_per_thread", WorkPerThread},
      {"block_size", BlockSize},
  };
  return all;
}

const Mutation* MutationByName(const std::string& name) {
  for (const Mutation& m : Mutations()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

}  // namespace kf
