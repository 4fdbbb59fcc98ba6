#include "cli/json_output.hpp"

namespace kf {

namespace {

nlohmann::json Optional(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json TimingJson(const std::optional<TimingStats>& t) {
  if (!t) return nullptr;
  return {{"median", t->median_ms}, {"min", t->min_ms}, {"max", t->max_ms}, {"runs", t->runs}};
}

}  // namespace

nlohmann::json EvaluationJson(const Evaluation& ev) {
  nlohmann::json config = nlohmann::json::object();
  for (const auto& [k, v] : ev.config) {
    char* end = nullptr;
    long long n = std::strtoll(v.c_str(), &end, 10);
    config[k] = (end && *end == '\0' && !v.empty()) ? nlohmann::json(n) : nlohmann::json(v);
  }
  return {
      {"status", StatusName(ev.status)},
      {"reason", ev.reason},
      {"device", ev.device},
      {"config", config},
      {"sizes", ev.bench_sizes},
      {"time_ms", TimingJson(ev.time)},
      {"baseline_time_ms", TimingJson(ev.baseline_time)},
      {"speedup", Optional(ev.speedup)},
      {"max_abs_err", ev.max_abs_err},
      {"max_rel_err", ev.max_rel_err},
      {"bad_ratio", ev.bad_ratio},
      {"nan_count", ev.nan_count},
      {"bandwidth_gbs", Optional(ev.bandwidth_gbs)},
      {"roofline_fraction", Optional(ev.roofline_fraction)},
      {"descriptor", nullptr},  // filled once the behaviour classifier exists
      {"compile_log", ev.compile_log},
      {"hints", ev.hints},
      {"check_seeds", ev.check_seeds},
  };
}

nlohmann::json DeviceJson(const DeviceInfo& d) {
  return {
      {"id", d.Selector()},
      {"backend", d.backend},
      {"index", d.index},
      {"name", d.name},
      {"vendor", d.vendor},
      {"class", DeviceClassName(d.device_class)},
      {"arch", d.arch},
      {"driver_version", d.driver_version},
      {"compiler_version", d.compiler_version},
      {"compute_units", d.compute_units},
      {"max_work_group_size", d.max_work_group_size},
      {"local_mem_bytes", d.local_mem_bytes},
      {"sub_group_width", d.sub_group_width},
      {"global_mem_bytes", d.global_mem_bytes},
      {"cache_bytes", d.cache_bytes},
      {"spec_bandwidth_gbs",
       d.spec_bandwidth_gbs > 0 ? nlohmann::json(d.spec_bandwidth_gbs) : nlohmann::json(nullptr)},
  };
}

nlohmann::json TaskJson(const Task& t) {
  nlohmann::json languages = nlohmann::json::array(), reference = nlohmann::json::object(),
                 baseline = nlohmann::json::object(), templates = nlohmann::json::object();
  for (Language l : t.Languages()) languages.push_back(LanguageName(l));
  for (const auto& [l, f] : t.reference) reference[std::string(LanguageName(l))] = f;
  for (const auto& [l, f] : t.baseline) baseline[std::string(LanguageName(l))] = f;
  for (const auto& [l, fs] : t.templates) templates[std::string(LanguageName(l))] = fs;
  return {{"name", t.name},         {"path", t.dir},
          {"op_class", t.op_class}, {"description", t.description},
          {"languages", languages}, {"reference", reference},
          {"baseline", baseline},   {"templates", templates}};
}

}  // namespace kf
