#include "cli/json_output.hpp"

namespace kf {

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
