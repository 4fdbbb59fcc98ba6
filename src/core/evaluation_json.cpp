#include "core/evaluation_json.hpp"

namespace kf {

namespace {

nlohmann::json Optional(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::optional<double> OptionalFrom(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<double>();
}

nlohmann::json TimingJson(const std::optional<TimingStats>& t) {
  if (!t) return nullptr;
  return {{"median", t->median_ms}, {"min", t->min_ms}, {"max", t->max_ms}, {"runs", t->runs}};
}

std::optional<TimingStats> TimingFrom(const nlohmann::json& j) {
  if (j.is_null()) return std::nullopt;
  TimingStats t;
  t.median_ms = j.at("median").get<double>();
  t.min_ms = j.at("min").get<double>();
  t.max_ms = j.at("max").get<double>();
  t.runs = j.at("runs").get<int>();
  return t;
}

}  // namespace

std::optional<Status> ParseStatus(std::string_view name) {
  for (Status s :
       {Status::kOk, Status::kCompileError, Status::kLaunchError, Status::kIncorrect, Status::kNan,
        Status::kCrash, Status::kTimeout, Status::kImplausible, Status::kInvalidConfig}) {
    if (StatusName(s) == name) return s;
  }
  return std::nullopt;
}

nlohmann::json ConfigToJson(const Config& config) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [k, v] : config) {
    char* end = nullptr;
    long long n = std::strtoll(v.c_str(), &end, 10);
    out[k] = (end && *end == '\0' && !v.empty()) ? nlohmann::json(n) : nlohmann::json(v);
  }
  return out;
}

Config ConfigFromJson(const nlohmann::json& j) {
  Config c;
  for (const auto& [k, v] : j.items()) c[k] = v.is_string() ? v.get<std::string>() : v.dump();
  return c;
}

nlohmann::json EvaluationToJson(const Evaluation& ev) {
  return {
      {"status", StatusName(ev.status)},
      {"reason", ev.reason},
      {"device", ev.device},
      {"config", ConfigToJson(ev.config)},
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
      {"descriptor",
       ev.descriptor.empty() ? nlohmann::json(nullptr) : nlohmann::json(ev.descriptor)},
      {"compile_log", ev.compile_log},
      {"compile_cache_hit", ev.compile_cache_hit},
      {"hints", ev.hints},
      {"check_seeds", ev.check_seeds},
  };
}

Evaluation EvaluationFromJson(const nlohmann::json& j) {
  Evaluation ev;
  std::optional<Status> status = ParseStatus(j.at("status").get<std::string>());
  if (!status) throw nlohmann::json::other_error::create(501, "unknown status", &j);
  ev.status = *status;
  ev.reason = j.value("reason", "");
  ev.device = j.value("device", "");
  ev.config = ConfigFromJson(j.value("config", nlohmann::json::object()));
  ev.bench_sizes = j.value("sizes", "");
  ev.time = TimingFrom(j.value("time_ms", nlohmann::json()));
  ev.baseline_time = TimingFrom(j.value("baseline_time_ms", nlohmann::json()));
  ev.speedup = OptionalFrom(j, "speedup");
  ev.max_abs_err = j.value("max_abs_err", 0.0);
  ev.max_rel_err = j.value("max_rel_err", 0.0);
  ev.bad_ratio = j.value("bad_ratio", 0.0);
  ev.nan_count = j.value("nan_count", 0LL);
  ev.bandwidth_gbs = OptionalFrom(j, "bandwidth_gbs");
  ev.roofline_fraction = OptionalFrom(j, "roofline_fraction");
  ev.compile_log = j.value("compile_log", "");
  ev.compile_cache_hit = j.value("compile_cache_hit", false);
  ev.hints = j.value("hints", std::vector<std::string>{});
  ev.check_seeds = j.value("check_seeds", std::vector<unsigned long long>{});
  if (j.contains("descriptor") && j["descriptor"].is_array()) {
    ev.descriptor = j["descriptor"].get<std::vector<int>>();
  }
  return ev;
}

}  // namespace kf
