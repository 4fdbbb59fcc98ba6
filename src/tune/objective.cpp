#include "tune/objective.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/input_error.hpp"

namespace kf {

std::string ReadMaybeGzipped(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");  // reads plain files unchanged too
  if (!f) throw InputError(path, 0, "file", "cannot read");
  std::string data;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) data.append(buf, static_cast<size_t>(n));
  bool failed = n < 0;
  gzclose(f);
  if (failed) throw InputError(path, 0, "file", "corrupt gzip data");
  return data;
}

namespace {

// A value as Kernel Tuner writes it in a cache key: ints plain, floats as Python prints them.
std::string ValueText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (d == static_cast<double>(static_cast<long long>(d))) return fmt::format("{:.1f}", d);
    return fmt::format("{}", d);
  }
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  return v.dump();
}

}  // namespace

std::unique_ptr<ReplayObjective> ReplayObjective::Load(const std::string& path) {
  nlohmann::json j = nlohmann::json::parse(ReadMaybeGzipped(path), nullptr, false);
  if (!j.is_object()) throw InputError(path, 0, "json", "not a JSON object");
  if (!j.contains("tune_params") || !j["tune_params"].is_object()) {
    throw InputError(path, 0, "tune_params", "missing (not a Kernel Tuner cache file?)");
  }
  if (!j.contains("cache") || !j["cache"].is_object())
    throw InputError(path, 0, "cache", "missing");
  std::vector<std::string> keys;
  if (j.contains("tune_params_keys")) {
    keys = j["tune_params_keys"].get<std::vector<std::string>>();
  } else {
    for (const auto& [k, v] : j["tune_params"].items()) keys.push_back(k);
  }
  std::vector<TuneParam> params;
  for (const std::string& k : keys) {
    const nlohmann::json& values = j["tune_params"][k];
    if (!values.is_array() || values.empty())
      throw InputError(path, 0, "tune_params." + k, "expected a list of values");
    std::vector<std::string> texts;
    for (const auto& v : values) texts.push_back(ValueText(v));
    params.push_back(MakeParam(k, texts));
  }
  auto r = std::unique_ptr<ReplayObjective>(new ReplayObjective());
  r->kernel_name_ = j.value("kernel_name", "");
  r->device_name_ = j.value("device_name", "");
  if (j.contains("kfoundry") && j["kfoundry"].is_object()) r->context_ = j["kfoundry"];
  std::vector<Point> points;
  for (const auto& [key, record] : j["cache"].items()) {
    Point p;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!record.contains(keys[i]))
        throw InputError(path, 0, "cache." + key, "lacks parameter " + keys[i]);
      std::string text = ValueText(record[keys[i]]);
      auto it = std::find(params[i].values.begin(), params[i].values.end(), text);
      if (it == params[i].values.end()) {
        throw InputError(path, 0, "cache." + key,
                         fmt::format("{} = {} is not among tune_params", keys[i], text));
      }
      p.push_back(static_cast<int>(it - params[i].values.begin()));
    }
    Measurement m;
    const nlohmann::json& t = record.contains("time") ? record["time"] : nlohmann::json();
    if (t.is_number()) {
      m.ok = true;
      m.time_ms = t.get<double>();
    } else {
      m.failure = t.is_string() ? t.get<std::string>() : "no time recorded";
    }
    r->records_[p] = m;
    points.push_back(p);
  }
  if (points.empty()) throw InputError(path, 0, "cache", "no recorded configurations");
  r->space_ = SearchSpace::FromPoints(std::move(params), std::move(points));
  return r;
}

Measurement ReplayObjective::Measure(const Point& point) {
  auto it = records_.find(point);
  if (it == records_.end()) return {false, 0, "InvalidConfig"};
  return it->second;
}

SearchSpace LoadT1Space(const std::string& path, const Env& env) {
  nlohmann::json j = nlohmann::json::parse(ReadMaybeGzipped(path), nullptr, false);
  if (!j.is_object() || !j.contains("ConfigurationSpace")) {
    throw InputError(path, 0, "ConfigurationSpace", "missing (not a T1 file?)");
  }
  const nlohmann::json& cs = j["ConfigurationSpace"];
  std::vector<TuneParam> params;
  for (const auto& tp : cs.value("TuningParameters", nlohmann::json::array())) {
    std::string name = tp.value("Name", "");
    std::string field = "TuningParameters." + name;
    std::vector<std::string> values;
    const nlohmann::json& v = tp["Values"];
    if (v.is_array()) {
      for (const auto& x : v) values.push_back(ValueText(x));
    } else if (v.is_string()) {  // a Python list literal: "[16, 32, 64]"
      std::string s = v.get<std::string>();
      size_t a = s.find('['), b = s.rfind(']');
      if (a == std::string::npos || b == std::string::npos || b < a)
        throw InputError(path, 0, field + ".Values", "expected a list");
      std::stringstream items(s.substr(a + 1, b - a - 1));
      std::string item;
      while (std::getline(items, item, ',')) {
        size_t x = item.find_first_not_of(" \t'\""), y = item.find_last_not_of(" \t'\"");
        if (x != std::string::npos) values.push_back(item.substr(x, y - x + 1));
      }
    }
    if (name.empty() || values.empty()) throw InputError(path, 0, field, "needs a Name and Values");
    params.push_back(MakeParam(name, values));
  }
  std::vector<Expr> constraints;
  for (const auto& c : cs.value("Conditions", nlohmann::json::array())) {
    std::string text = c.value("Expression", "");
    try {
      constraints.push_back(Expr::Parse(text));
    } catch (const ExprError& e) {
      throw InputError(path, 0, "Conditions", e.what());
    }
  }
  if (params.empty()) throw InputError(path, 0, "TuningParameters", "none");
  return SearchSpace::FromConstraints(std::move(params), std::move(constraints), env);
}

void WriteKernelTunerCache(const std::string& path, const SearchSpace& space,
                           const std::map<Point, Measurement>& records,
                           const std::string& kernel_name, const std::string& device_name,
                           const nlohmann::json& context) {
  nlohmann::json j;
  j["device_name"] = device_name;
  j["kernel_name"] = kernel_name;
  j["objective"] = "time";
  if (context.is_object()) j["kfoundry"] = context;
  std::vector<std::string> keys;
  for (const auto& p : space.params()) keys.push_back(p.name);
  j["tune_params_keys"] = keys;
  auto value = [](const TuneParam& p, size_t i) {
    char* end = nullptr;
    long long n = std::strtoll(p.values[i].c_str(), &end, 10);
    return end && *end == '\0' ? nlohmann::json(n) : nlohmann::json(p.values[i]);
  };
  for (const auto& p : space.params()) {
    nlohmann::json vs = nlohmann::json::array();
    for (size_t i = 0; i < p.values.size(); ++i) vs.push_back(value(p, i));
    j["tune_params"][p.name] = vs;
  }
  j["cache"] = nlohmann::json::object();
  for (const auto& [point, m] : records) {
    nlohmann::json rec;
    for (size_t i = 0; i < space.params().size(); ++i)
      rec[keys[i]] = value(space.params()[i], static_cast<size_t>(point[i]));
    rec["time"] = m.ok ? nlohmann::json(m.time_ms)
                       : nlohmann::json(m.failure.empty() ? "RuntimeFailedConfig" : m.failure);
    j["cache"][space.Key(point)] = rec;
  }
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) throw InputError(path, 0, "file", "cannot write");
    out << j.dump(1) << "\n";
  }
  std::rename(tmp.c_str(), path.c_str());
}

}  // namespace kf
