#include "prompt/library.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <utility>

#include "core/data_path.hpp"
#include "core/input_error.hpp"
#include "core/toml_file.hpp"

#ifndef KF_SOURCE_PROMPTS_DIR
#define KF_SOURCE_PROMPTS_DIR "prompts"
#endif

namespace kf {

namespace fs = std::filesystem;

namespace {

constexpr std::array<std::string_view, 4> kKinds = {"philosophy", "strategy", "pitfall",
                                                    "analysis"};
constexpr std::array<std::string_view, 3> kCategories = {"memory", "compute", "parallelism"};
constexpr std::array<std::string_view, 5> kFields = {"id", "kind", "category", "aims", "text"};

template <size_t N>
bool OneOf(const std::array<std::string_view, N>& set, const std::string& s) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

template <size_t N>
std::string Listed(const std::array<std::string_view, N>& set) {
  std::string out;
  for (std::string_view s : set) out += (out.empty() ? "" : ", ") + std::string(s);
  return out;
}

int LineOf(const toml::node& n) {
  return static_cast<int>(n.source().begin.line);
}

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// "dimension=level", both non-empty words.
bool IsAim(const std::string& aim) {
  size_t eq = aim.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == aim.size()) return false;
  for (size_t i = 0; i < aim.size(); ++i) {
    if (i != eq && !IsWordChar(aim[i])) return false;
  }
  return true;
}

// Reads the [[component]] tables of one file, naming the file and line in every error.
class ComponentReader {
 public:
  explicit ComponentReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void Fail(const toml::node& n, const std::string& field,
                         const std::string& message) const {
    throw InputError(file_, LineOf(n), "component." + field, message);
  }

  std::string String(const toml::table& t, const std::string& key, bool required) const {
    const toml::node* n = t.get(key);
    if (!n) {
      if (required) Fail(t, key, "missing");
      return "";
    }
    const auto* s = n->as_string();
    if (!s) Fail(*n, key, "must be a string");
    return s->get();
  }

  std::vector<std::string> Aims(const toml::table& t) const {
    std::vector<std::string> aims;
    const toml::node* n = t.get("aims");
    if (!n) return aims;
    const toml::array* arr = n->as_array();
    if (!arr) Fail(*n, "aims", "must be an array of \"dimension=level\" strings");
    for (const toml::node& item : *arr) {
      const auto* s = item.as_string();
      if (!s || !IsAim(s->get()))
        Fail(item, "aims", "each aim must be a string \"dimension=level\" (\"memory=vectorised\")");
      aims.push_back(s->get());
    }
    return aims;
  }

  Component Read(const toml::table& t) const {
    for (const auto& [key, value] : t) {
      if (!OneOf(kFields, std::string(key.str())))
        Fail(value, std::string(key.str()), "unknown field (fields: " + Listed(kFields) + ")");
    }
    Component c;
    c.id = String(t, "id", true);
    if (c.id.empty()) Fail(*t.get("id"), "id", "must not be empty");
    c.kind = String(t, "kind", true);
    if (!IsComponentKind(c.kind))
      Fail(*t.get("kind"), "kind", "\"" + c.kind + "\" is not one of " + Listed(kKinds));
    c.category = String(t, "category", c.kind == "strategy");
    if (c.kind == "strategy" && !IsStrategyCategory(c.category))
      Fail(*t.get("category"), "category",
           "\"" + c.category + "\" is not one of " + Listed(kCategories));
    if (c.kind != "strategy" && t.get("category"))
      Fail(*t.get("category"), "category", "only strategies have a category");
    c.aims = Aims(t);
    c.text = String(t, "text", true);
    if (c.text.find_first_not_of(" \t\r\n") == std::string::npos)
      Fail(*t.get("text"), "text", "must not be empty");
    return c;
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

void LoadFile(const std::string& file, std::vector<Component>& out,
              std::map<std::string, std::string>& defined_at) {
  toml::table root = ReadTomlFile(file);
  ComponentReader reader(file);
  for (const auto& [key, value] : root) {
    if (key.str() != "component")
      throw InputError(file, LineOf(value), std::string(key.str()),
                       "unknown field (a prompt file holds [[component]] tables)");
  }
  const toml::node* list = root.get("component");
  if (!list) return;
  const toml::array* arr = list->as_array();
  if (!arr || !arr->is_array_of_tables())
    throw InputError(file, LineOf(*list), "component", "must be [[component]] tables");
  for (const toml::node& n : *arr) {
    const toml::table& t = *n.as_table();
    Component c = reader.Read(t);
    std::string where = file + ":" + std::to_string(LineOf(t));
    if (auto [it, fresh] = defined_at.emplace(c.id, where); !fresh)
      reader.Fail(*t.get("id"), "id", "duplicate id \"" + c.id + "\" (also at " + it->second + ")");
    out.push_back(std::move(c));
  }
}

}  // namespace

bool IsComponentKind(const std::string& kind) {
  return OneOf(kKinds, kind);
}

bool IsStrategyCategory(const std::string& category) {
  return OneOf(kCategories, category);
}

PromptLibrary PromptLibrary::Load(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError(dir, 0, "prompts", "no such folder");
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".toml") files.push_back(e.path().string());
  }
  if (ec) throw InputError(dir, 0, "prompts", ec.message());
  std::sort(files.begin(), files.end());
  PromptLibrary library;
  std::map<std::string, std::string> defined_at;
  for (const std::string& f : files) LoadFile(f, library.components_, defined_at);
  return library;
}

const Component* PromptLibrary::Find(const std::string& id) const {
  for (const Component& c : components_) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

Component* PromptLibrary::Mutable(const std::string& id) {
  return const_cast<Component*>(std::as_const(*this).Find(id));
}

std::vector<const Component*> PromptLibrary::OfKind(const std::string& kind) const {
  std::vector<const Component*> out;
  for (const Component& c : components_) {
    if (c.kind == kind) out.push_back(&c);
  }
  return out;
}

const Component& PromptLibrary::AddVersion(const std::string& id, std::string text) {
  Component* c = Mutable(id);
  if (!c) throw std::out_of_range("no prompt component \"" + id + "\"");
  c->parent_version = c->version;
  c->version += 1;
  c->text = std::move(text);
  c->made_by = "meta";
  c->stats = {};
  return *c;
}

bool PromptLibrary::Replace(Component c) {
  Component* current = Mutable(c.id);
  if (!current || c.version < current->version) return false;
  *current = std::move(c);
  return true;
}

void PromptLibrary::Credit(const std::string& id, int grade, double gain) {
  Component* c = Mutable(id);
  if (!c) return;
  grade = std::clamp(grade, 0, 5);
  c->stats.uses += 1;
  c->stats.credit += grade / 5.0;
  if (grade >= 4) c->stats.improvements += 1;
  c->stats.gain += gain;
}

std::string DefaultPromptsDir() {
  return DataPath("KF_PROMPTS_DIR", "prompts", KF_SOURCE_PROMPTS_DIR);
}

}  // namespace kf
