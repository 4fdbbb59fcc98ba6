#include "core/identity.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "core/codec.hpp"

namespace kf {

namespace {

std::string Hash(char prefix, const std::string& material) {
  XXH128_hash_t h = XXH3_128bits(material.data(), material.size());
  return fmt::format("{}{:016x}{:016x}", prefix, h.high64, h.low64);
}

}  // namespace

std::string KernelId(const Kernel& kernel) {
  return Hash(
      'k', std::string(LanguageName(kernel.language)) + "\n" + kernel.entry + "\n" + kernel.source);
}

std::string CandidateId(const std::string& kernel_id, const Config& config) {
  return Hash('c', kernel_id + "\n" + ConfigToJson(config).dump());
}

std::string EvaluationKey(const std::string& candidate_id, const std::string& device,
                          const nlohmann::json& settings) {
  return Hash('e', candidate_id + "\n" + device + "\n" + settings.dump());
}

std::string TaskContentId(const std::string& dir,
                          const std::optional<std::string_view>& toml_text) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().filename().string().front() == '.') {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec)) files.push_back(fs::relative(it->path(), dir).generic_string());
  }
  if (toml_text && std::find(files.begin(), files.end(), "task.toml") == files.end())
    files.push_back("task.toml");
  std::sort(files.begin(), files.end());
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  for (const std::string& f : files) {
    std::string content;
    if (f == "task.toml" && toml_text) {
      content = std::string(*toml_text);
    } else {
      std::ifstream in(fs::path(dir) / f, std::ios::binary);
      content.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    // Each part prefixed by its length: no two folders hash the same material.
    std::string head = fmt::format("{}:{}\n{}:", f.size(), f, content.size());
    XXH3_128bits_update(state, head.data(), head.size());
    XXH3_128bits_update(state, content.data(), content.size());
  }
  XXH128_hash_t h = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  return fmt::format("t{:016x}{:016x}", h.high64, h.low64);
}

}  // namespace kf
