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
  return Hash('k', std::string(LanguageName(kernel.language)) + "\n" + kernel.EntryNames() + "\n" +
                       kernel.source);
}

std::string CandidateId(const std::string& kernel_id, const Config& config) {
  return Hash('c', kernel_id + "\n" + ConfigToJson(config).dump());
}

std::string EvaluationKey(const std::string& candidate_id, const std::string& device,
                          const nlohmann::json& settings) {
  return Hash('e', candidate_id + "\n" + device + "\n" + settings.dump());
}

namespace {

// Each file's path and content, in path order, each part prefixed by its length: no two folders
// hash the same material.
class TaskHasher {
 public:
  TaskHasher() : state_(XXH3_createState()) { XXH3_128bits_reset(state_); }
  ~TaskHasher() { XXH3_freeState(state_); }
  TaskHasher(const TaskHasher&) = delete;
  TaskHasher& operator=(const TaskHasher&) = delete;
  void Add(const std::string& path, std::string_view content) {
    std::string head = fmt::format("{}:{}\n{}:", path.size(), path, content.size());
    XXH3_128bits_update(state_, head.data(), head.size());
    XXH3_128bits_update(state_, content.data(), content.size());
  }
  std::string Id() const {
    XXH128_hash_t h = XXH3_128bits_digest(state_);
    return fmt::format("t{:016x}{:016x}", h.high64, h.low64);
  }

 private:
  XXH3_state_t* state_;
};

}  // namespace

std::vector<std::string> TaskFolderFiles(const std::string& dir) {
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
  std::sort(files.begin(), files.end());
  return files;
}

std::string TaskContentId(const std::string& dir,
                          const std::optional<std::string_view>& toml_text) {
  std::vector<std::string> files = TaskFolderFiles(dir);
  if (toml_text && !std::binary_search(files.begin(), files.end(), "task.toml"))
    files.insert(std::lower_bound(files.begin(), files.end(), "task.toml"), "task.toml");
  TaskHasher hasher;
  for (const std::string& f : files) {
    if (f == "task.toml" && toml_text) {
      hasher.Add(f, *toml_text);
      continue;
    }
    std::ifstream in(std::filesystem::path(dir) / f, std::ios::binary);
    std::string content(std::istreambuf_iterator<char>(in), {});
    hasher.Add(f, content);
  }
  return hasher.Id();
}

std::string TaskContentIdOfFiles(const std::map<std::string, std::string>& files) {
  TaskHasher hasher;
  for (const auto& [path, content] : files) hasher.Add(path, content);
  return hasher.Id();
}

}  // namespace kf
