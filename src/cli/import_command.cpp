#include "cli/import_command.hpp"

#include <fmt/format.h>

namespace kf {

int RunImport(const ImportOptions& options) {
  ImportedTask t = ImportProblem(options);
  const nlohmann::json& j = t.inspection;
  std::string sizes;
  for (const auto& s : j["sizes"])
    sizes += fmt::format("{}{} = {}", sizes.empty() ? "" : ", ", s["name"].get<std::string>(),
                         s["value"].get<long long>());
  fmt::print(
      "{}: task '{}' with {} input(s), {} parameter(s) and buffer(s), {} output(s); sizes "
      "{}; {} check sets\n",
      t.dir, t.name, j["inputs"].size(), j["parameters"].size(), j["outputs"].size(), sizes,
      j["size_sets"]["check"].size());
  return 0;
}

}  // namespace kf
