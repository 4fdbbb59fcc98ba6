#include "search/classifier.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

#include "core/data_path.hpp"
#include "core/input_error.hpp"
#include "core/toml_file.hpp"
#include "search/macro_expand.hpp"

namespace kf {

namespace fs = std::filesystem;

std::string StripComments(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '"') {  // copy a string literal whole
      size_t j = i + 1;
      while (j < s.size() && s[j] != '"') j += s[j] == '\\' ? 2 : 1;
      out.append(s, i, std::min(j, s.size() - 1) - i + 1);
      i = j;
    } else if (s.compare(i, 2, "//") == 0) {
      while (i < s.size() && s[i] != '\n') ++i;
      out += '\n';
    } else if (s.compare(i, 2, "/*") == 0) {
      size_t end = s.find("*/", i + 2);
      i = end == std::string::npos ? s.size() : end + 1;
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

namespace {

std::vector<FeaturePattern> Patterns(const toml::node* n, const std::string& file,
                                     const std::string& field) {
  std::vector<FeaturePattern> out;
  if (!n) return out;
  const toml::array* a = n->as_array();
  if (!a)
    throw InputError(file, static_cast<int>(n->source().begin.line), field,
                     "expected a list of patterns");
  for (const auto& v : *a) {
    if (!v.is_string())
      throw InputError(file, static_cast<int>(v.source().begin.line), field, "expected strings");
    FeaturePattern p;
    p.text = v.as_string()->get();
    if (p.text.size() > 2 && p.text.front() == '/' && p.text.back() == '/') {
      p.is_regex = true;
      try {
        p.regex = std::regex(p.text.substr(1, p.text.size() - 2),
                             std::regex::ECMAScript | std::regex::optimize);
      } catch (const std::regex_error& e) {
        throw InputError(file, static_cast<int>(v.source().begin.line), field,
                         std::string("bad regular expression: ") + e.what());
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

bool Matches(const std::vector<FeaturePattern>& patterns, const std::string& text) {
  for (const FeaturePattern& p : patterns) {
    if (p.is_regex ? std::regex_search(text, p.regex) : text.find(p.text) != std::string::npos)
      return true;
  }
  return false;
}

}  // namespace

DescriptorSpace DescriptorSpace::Load(const std::string& path) {
  toml::table root = ReadTomlFile(path);
  DescriptorSpace d;
  if (const toml::table* features = root["features"].as_table()) {
    for (const auto& [k, v] : *features) {
      std::string name(k.str());
      const toml::table* t = v.as_table();
      if (!t)
        throw InputError(path, static_cast<int>(v.source().begin.line), "features." + name,
                         "expected a table");
      Feature f;
      f.name = name;
      f.cuda_listing = Patterns(t->get("cuda"), path, "features." + name + ".cuda");
      f.cuda_source = Patterns(t->get("cuda_source"), path, "features." + name + ".cuda_source");
      f.opencl_source = Patterns(t->get("opencl"), path, "features." + name + ".opencl");
      d.features_[name] = std::move(f);
    }
  }
  const toml::array* dims = root["dimension"].as_array();
  if (!dims || dims->empty())
    throw InputError(path, 0, "dimension", "expected [[dimension]] tables");
  for (const toml::node& node : *dims) {
    const toml::table* t = node.as_table();
    int line = static_cast<int>(node.source().begin.line);
    if (!t) throw InputError(path, line, "dimension", "expected a table");
    Dimension dim;
    auto name = t->get("name");
    if (!name || !name->is_string()) throw InputError(path, line, "dimension.name", "missing");
    dim.name = name->as_string()->get();
    const toml::array* levels = t->get("levels") ? t->get("levels")->as_array() : nullptr;
    if (!levels || levels->size() < 2)
      throw InputError(path, line, "dimension " + dim.name + ".levels",
                       "expected two or more level names");
    for (const auto& l : *levels)
      dim.levels.emplace_back(l.as_string() ? l.as_string()->get() : "");
    dim.level_features.resize(dim.levels.size());
    for (size_t i = 1; i < dim.levels.size(); ++i) {
      const toml::node* fs_node = t->get(dim.levels[i]);
      std::string field = "dimension " + dim.name + "." + dim.levels[i];
      if (!fs_node || !fs_node->as_array())
        throw InputError(path, line, field, "expected the list of features that decide this level");
      for (const auto& f : *fs_node->as_array()) {
        std::string feature = f.as_string() ? std::string(f.as_string()->get()) : "";
        if (!d.features_.count(feature)) {
          throw InputError(path, static_cast<int>(f.source().begin.line), field,
                           "unknown feature '" + feature + "'");
        }
        dim.level_features[i].push_back(feature);
      }
    }
    d.dimensions_.push_back(std::move(dim));
  }
  return d;
}

std::vector<std::string> DescriptorSpace::Features(Language lang, const std::string& source,
                                                   const std::string& listing,
                                                   const Config& config) const {
  std::string code = StripComments(source);
  if (lang == Language::kOpenCL) code = ExpandMacros(code, config);
  std::vector<std::string> present;
  for (const auto& [name, f] : features_) {
    bool has = lang == Language::kOpenCL
                   ? Matches(f.opencl_source, code)
                   : Matches(f.cuda_listing, listing) || Matches(f.cuda_source, code);
    if (has) present.push_back(name);
  }
  return present;
}

std::vector<int> DescriptorSpace::Classify(Language lang, const std::string& source,
                                           const std::string& listing, const Config& config) const {
  std::vector<std::string> present = Features(lang, source, listing, config);
  auto has = [&](const std::string& f) {
    return std::find(present.begin(), present.end(), f) != present.end();
  };
  std::vector<int> cell;
  for (const Dimension& dim : dimensions_) {
    int level = 0;
    for (size_t i = 1; i < dim.levels.size(); ++i) {
      for (const std::string& f : dim.level_features[i]) {
        if (has(f)) level = static_cast<int>(i);
      }
    }
    cell.push_back(level);
  }
  return cell;
}

std::string DescriptorSpace::Describe(const std::vector<int>& cell) const {
  std::string out;
  for (size_t d = 0; d < dimensions_.size() && d < cell.size(); ++d) {
    const Dimension& dim = dimensions_[d];
    int level = cell[d];
    std::string name = level >= 0 && level < static_cast<int>(dim.levels.size())
                           ? dim.levels[static_cast<size_t>(level)]
                           : fmt::format("level {}", level);
    out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", dim.name, name);
  }
  return out;
}

int DescriptorSpace::CellCount() const {
  int n = 1;
  for (const Dimension& d : dimensions_) n *= static_cast<int>(d.levels.size());
  return n;
}

std::string DefaultDescriptorFile() {
  return DataPath("KF_DESCRIPTORS", "descriptors/default.toml", KF_SOURCE_DESCRIPTORS);
}

}  // namespace kf
