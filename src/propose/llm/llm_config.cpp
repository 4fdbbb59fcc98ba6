#include "propose/llm/llm_config.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <map>
#include <string_view>

#include "core/input_error.hpp"
#include "core/toml_file.hpp"

namespace kf {

namespace {

constexpr const char* kOpenAiUrl = "https://api.openai.com/v1";
// clang-format off
constexpr std::array<std::string_view, 12> kModelFields = {
    "name", "model", "base_url", "api_key_env", "weight", "temperature", "max_tokens",
    "max_completion_tokens", "reasoning_effort", "price_in", "price_out", "context_tokens"};
// clang-format on

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// A setting and where it came from (a flag or an environment variable), for error messages.
struct Sourced {
  std::string value, from;
};

Sourced FirstGiven(const std::string& flag_value, const char* flag,
                   std::initializer_list<const char*> variables) {
  if (!flag_value.empty()) return {flag_value, flag};
  for (const char* name : variables) {
    std::string value = Env(name);
    if (!value.empty()) return {value, name};
  }
  return {};
}

Sourced DefaultBaseUrl(const LlmFlags& flags) {
  Sourced base =
      FirstGiven(flags.base_url, "--llm-base-url", {"KFOUNDRY_LLM_BASE_URL", "OPENAI_BASE_URL"});
  if (base.value.empty() && !Env("OPENAI_API_KEY").empty()) return {kOpenAiUrl, "OPENAI_API_KEY"};
  return base;
}

bool IsHttpUrl(const std::string& url) {
  return url.starts_with("http://") || url.starts_with("https://");
}

std::string WithoutTrailingSlash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

// Reads the fields of [[model]] tables, failing with file:line:field.
class ModelsReader {
 public:
  explicit ModelsReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void Fail(const toml::node* node, const std::string& field,
                         const std::string& message) const {
    int line = node ? static_cast<int>(node->source().begin.line) : 0;
    throw InputError(file_, line, field, message);
  }

  std::string String(const toml::table& t, const std::string& key, const std::string& field,
                     const std::string& fallback) const {
    const toml::node* n = t.get(key);
    if (!n) return fallback;
    if (!n->is_string()) Fail(n, field, "expected a string");
    return std::string(n->as_string()->get());
  }

  double Number(const toml::table& t, const std::string& key, const std::string& field,
                double fallback) const {
    const toml::node* n = t.get(key);
    if (!n) return fallback;
    if (n->is_integer()) return static_cast<double>(n->as_integer()->get());
    if (!n->is_floating_point() || !std::isfinite(n->as_floating_point()->get())) {
      Fail(n, field, "expected a number");
    }
    return n->as_floating_point()->get();
  }

  int PositiveInteger(const toml::table& t, const std::string& key, const std::string& field,
                      int fallback) const {
    const toml::node* n = t.get(key);
    if (!n) return fallback;
    if (!n->is_integer()) Fail(n, field, "expected an integer");
    int64_t v = n->as_integer()->get();
    if (v < 1 || v > std::numeric_limits<int>::max()) Fail(n, field, "expected a positive integer");
    return static_cast<int>(v);
  }

 private:
  std::string file_;
};

// Where a field is, or its table when it is absent: for the line of an error.
const toml::node* At(const toml::table& t, const std::string& key) {
  const toml::node* n = t.get(key);
  return n ? n : &t;
}

void CheckFieldNames(const ModelsReader& r, const toml::table& t, const std::string& at) {
  for (const auto& [key, node] : t) {
    if (key.str() == "api_key") {
      r.Fail(&node, at + ".api_key",
             "a key is never written in a file: put it in an environment variable and name the "
             "variable with api_key_env");
    }
    if (std::ranges::find(kModelFields, key.str()) == kModelFields.end()) {
      r.Fail(&node, at + "." + std::string(key.str()),
             fmt::format("unknown field (known: {})", fmt::join(kModelFields, ", ")));
    }
  }
}

// The key for a model: from the variable it names, else the default key, but only for the
// server that key was given with.
std::string ApiKey(const ModelsReader& r, const toml::table& t, const std::string& at,
                   const ModelSettings& m, const ModelSettings& defaults) {
  const toml::node* n = t.get("api_key_env");
  if (!n) {
    bool same_server = WithoutTrailingSlash(m.base_url) == WithoutTrailingSlash(defaults.base_url);
    return same_server ? defaults.api_key : "";
  }
  std::string variable = r.String(t, "api_key_env", at + ".api_key_env", "");
  if (variable.empty()) r.Fail(n, at + ".api_key_env", "empty: name an environment variable");
  std::string key = Env(variable.c_str());
  if (key.empty()) {
    r.Fail(n, at + ".api_key_env", "the environment variable " + variable + " is not set");
  }
  return key;
}

void ReadServer(const ModelsReader& r, const toml::table& t, const std::string& at,
                const ModelSettings& defaults, ModelSettings& m) {
  m.base_url = r.String(t, "base_url", at + ".base_url", defaults.base_url);
  if (m.base_url.empty()) {
    r.Fail(&t, at + ".base_url",
           "no server: give base_url here, --llm-base-url, or KFOUNDRY_LLM_BASE_URL / "
           "OPENAI_BASE_URL");
  }
  if (!IsHttpUrl(m.base_url)) {
    r.Fail(At(t, "base_url"), at + ".base_url",
           fmt::format("\"{}\" is not an http:// or https:// URL", m.base_url));
  }
  m.api_key = ApiKey(r, t, at, m, defaults);
}

void ReadGeneration(const ModelsReader& r, const toml::table& t, const std::string& at,
                    ModelSettings& m) {
  m.weight = r.Number(t, "weight", at + ".weight", m.weight);
  if (m.weight <= 0) r.Fail(At(t, "weight"), at + ".weight", "expected a weight above 0");
  m.temperature = r.Number(t, "temperature", at + ".temperature", m.temperature);
  if (m.temperature > 2) {
    r.Fail(At(t, "temperature"), at + ".temperature", "expected at most 2 (negative: not sent)");
  }
  m.max_tokens = r.PositiveInteger(t, "max_tokens", at + ".max_tokens", m.max_tokens);
  m.max_completion_tokens = r.PositiveInteger(
      t, "max_completion_tokens", at + ".max_completion_tokens", m.max_completion_tokens);
  m.reasoning_effort =
      r.String(t, "reasoning_effort", at + ".reasoning_effort", m.reasoning_effort);
  m.context_tokens =
      r.PositiveInteger(t, "context_tokens", at + ".context_tokens", m.context_tokens);
  m.price_in_per_mtok = r.Number(t, "price_in", at + ".price_in", m.price_in_per_mtok);
  m.price_out_per_mtok = r.Number(t, "price_out", at + ".price_out", m.price_out_per_mtok);
  if (m.price_in_per_mtok < 0) r.Fail(At(t, "price_in"), at + ".price_in", "expected a price >= 0");
  if (m.price_out_per_mtok < 0) {
    r.Fail(At(t, "price_out"), at + ".price_out", "expected a price >= 0");
  }
}

ModelSettings ReadModel(const ModelsReader& r, const toml::table& t, const std::string& at,
                        const ModelSettings& defaults) {
  CheckFieldNames(r, t, at);
  ModelSettings m = defaults;
  m.name = r.String(t, "name", at + ".name", "");
  m.model = r.String(t, "model", at + ".model", "");
  if (m.model.empty()) r.Fail(At(t, "model"), at + ".model", "missing: the model id to ask for");
  ReadServer(r, t, at, defaults, m);
  ReadGeneration(r, t, at, m);
  return m;
}

}  // namespace

std::vector<ModelSettings> LoadModelsFile(const std::string& path, const ModelSettings& defaults) {
  toml::table root = ReadTomlFile(path);
  ModelsReader r(path);
  for (const auto& [key, node] : root) {
    if (key.str() != "model") {
      r.Fail(&node, std::string(key.str()), "unknown field (the file holds [[model]] tables)");
    }
  }
  const toml::node* list = root.get("model");
  if (!list) r.Fail(nullptr, "model", "no [[model]] tables in the file");
  const toml::array* models = list->as_array();
  if (!models || !models->is_array_of_tables()) {
    r.Fail(list, "model", "expected [[model]] tables (an array of tables)");
  }
  std::vector<ModelSettings> out;
  std::map<std::string, std::string> labels;  // label -> where it was given
  for (size_t i = 0; i < models->size(); ++i) {
    std::string at = fmt::format("model[{}]", i);
    const toml::table& t = *models->get(i)->as_table();
    out.push_back(ReadModel(r, t, at, defaults));
    auto [it, fresh] = labels.emplace(out.back().Label(), at);
    if (!fresh) {
      r.Fail(&t, at + ".name",
             fmt::format("the label \"{}\" is also {}'s: give each model its own name", it->first,
                         it->second));
    }
  }
  return out;
}

std::vector<ModelSettings> ResolveModels(const LlmFlags& flags) {
  Sourced base = DefaultBaseUrl(flags);
  if (!base.value.empty() && !IsHttpUrl(base.value)) {
    throw InputError(base.from, 0, base.value, "not an http:// or https:// URL");
  }
  ModelSettings defaults;
  defaults.base_url = base.value;
  defaults.api_key =
      FirstGiven(flags.api_key, "--llm-api-key", {"KFOUNDRY_LLM_API_KEY", "OPENAI_API_KEY"}).value;
  if (flags.temperature != -2) defaults.temperature = flags.temperature;
  if (flags.max_tokens > 0) defaults.max_tokens = flags.max_tokens;
  if (!flags.models_file.empty()) {
    if (!flags.model.empty()) {
      throw InputError("--llm-model", 0, flags.model,
                       "give either --llm-model or --llm-models FILE, not both");
    }
    return LoadModelsFile(flags.models_file, defaults);
  }
  Sourced model = FirstGiven(flags.model, "--llm-model", {"KFOUNDRY_LLM_MODEL"});
  if (model.value.empty()) {
    throw InputError("--llm-model", 0, "MODEL",
                     "no model: give --llm-model MODEL, set KFOUNDRY_LLM_MODEL, or give "
                     "--llm-models FILE");
  }
  if (base.value.empty()) {
    throw InputError("--llm-base-url", 0, "URL",
                     "no server: give --llm-base-url URL, set KFOUNDRY_LLM_BASE_URL or "
                     "OPENAI_BASE_URL, or set OPENAI_API_KEY for api.openai.com");
  }
  defaults.model = model.value;
  return {defaults};
}

}  // namespace kf
