#include "store/rows.hpp"

#include <fmt/format.h>

#include <chrono>
#include <ctime>

#include "core/codec.hpp"

namespace kf {

std::string StoreTimestamp() {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&t, &utc);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &utc);
  return fmt::format("{}.{:03d}Z", buf, static_cast<int>(ms));
}

std::string ProposalColumn(const Proposal& p) {
  nlohmann::json j = ProposalToJson(p);
  j.erase("kernel");
  j["kernel_path"] = p.kernel.path;
  return j.dump();
}

Proposal ProposalFromColumns(const std::string& column, const std::string& kernel_path,
                             const std::string& kernel_source) {
  nlohmann::json p = nlohmann::json::parse(column);
  p["kernel"] = {{"path", p.value("kernel_path", kernel_path)}, {"source", kernel_source}};
  return ProposalFromJson(p);
}

std::string TaskBundleFilesColumn(const TaskBundle& bundle) {
  return TaskBundleToJson(bundle).at("files").dump();
}

TaskBundle TaskBundleFromColumns(const std::string& id, const std::string& name,
                                 const std::string& files) {
  return TaskBundleFromJson({{"id", id}, {"name", name}, {"files", nlohmann::json::parse(files)}});
}

long long TaskBundleBytes(const TaskBundle& bundle) {
  long long total = 0;
  for (const auto& [path, bytes] : bundle.files) total += static_cast<long long>(bytes.size());
  return total;
}

}  // namespace kf
