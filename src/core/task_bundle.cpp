#include "core/task_bundle.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>
#include <vector>

#include "core/codec.hpp"
#include "core/identity.hpp"
#include "core/input_error.hpp"

namespace kf {

namespace {

namespace fs = std::filesystem;

std::string ReadWhole(const fs::path& file, const std::string& dir) {
  std::ifstream in(file, std::ios::binary);
  if (!in.is_open()) throw InputError(dir, 0, file.string(), "cannot be opened");
  std::string content(std::istreambuf_iterator<char>(in), {});
  if (in.bad()) throw InputError(dir, 0, file.string(), "cannot be read");
  return content;
}

// A bundle's path is relative, '/'-separated, and every part a plain name: nothing it names can
// be outside the folder or hidden from TaskContentId.
bool PlainRelativePath(const std::string& path) {
  if (path.empty() || path.find('\0') != std::string::npos) return false;
  size_t start = 0;
  while (true) {
    size_t end = path.find('/', start);
    std::string_view part(path.data() + start,
                          (end == std::string::npos ? path.size() : end) - start);
    if (part.empty() || part.front() == '.') return false;  // also "/x", "a//b", "..", "."
    if (end == std::string::npos) return true;
    start = end + 1;
  }
}

// The id names the cache folder: it must be TaskContentId's form, not a path.
bool TaskIdForm(const std::string& id) {
  if (id.size() != 33 || id.front() != 't') return false;
  return id.find_first_not_of("0123456789abcdef", 1) == std::string::npos;
}

// Removes a folder this process made unless it was handed on (renamed into place).
struct OwnFolder {
  fs::path path;
  ~OwnFolder() {
    std::error_code ignored;
    if (!path.empty()) fs::remove_all(path, ignored);
  }
};

// A fresh hidden sibling folder in `root` (unique even between hosts sharing the folder).
fs::path MakeTempFolder(const fs::path& root, const std::string& id) {
  std::string tmpl = (root / ("." + id + ".tmp-XXXXXX")).string();
  if (!mkdtemp(tmpl.data()))
    throw fs::filesystem_error("cannot make a folder", tmpl,
                               std::error_code(errno, std::generic_category()));
  fs::permissions(tmpl, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  return tmpl;
}

// Written and flushed to the disk: once the folder is renamed into place, a crash or a power
// loss cannot leave it with a file cut short.
void WriteFile(const fs::path& file, const std::string& bytes) {
  fs::create_directories(file.parent_path());
  int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  size_t done = 0;
  while (fd >= 0 && done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  bool ok = fd >= 0 && done == bytes.size() && fsync(fd) == 0;
  int error = errno;
  if (fd >= 0) close(fd);
  if (!ok)
    throw fs::filesystem_error("cannot write", file,
                               std::error_code(error, std::generic_category()));
}

// The cache's folder for `id` as it stands: complete, since it only ever appears by a rename.
// One whose files do not hash to its id was edited in place; it is not used, nor silently
// replaced while another process may be reading it.
std::string CheckedCacheFolder(const fs::path& folder, const std::string& id) {
  if (TaskContentId(folder.string()) != id) {
    throw InputError(folder.string(), 0, "task cache",
                     "its files no longer hash to its id (edited?): remove the folder");
  }
  return folder.string();
}

std::vector<std::byte> Bytes(const std::string& s) {
  const auto* begin = reinterpret_cast<const std::byte*>(s.data());
  return {begin, begin + s.size()};  // an empty file too (memcpy may not take its null data())
}

}  // namespace

TaskBundle PackTaskFolder(const std::string& dir, const std::string& name) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError(dir, 0, "task", "not a folder");
  TaskBundle bundle;
  bundle.name = name;
  size_t total = 0;
  auto refuse_size = [&] {
    return InputError(
        dir, 0, "task",
        fmt::format("over {} MiB in all: too large to send to workers", kMaxTaskBundleBytes >> 20));
  };
  for (const std::string& path : TaskFolderFiles(dir)) {
    fs::path file = fs::path(dir) / path;
    uintmax_t size = fs::file_size(file, ec);  // refused before it is read where it can be
    if (!ec && total + size > kMaxTaskBundleBytes) throw refuse_size();
    std::string content = ReadWhole(file, dir);
    total += content.size();  // what was read: the file may have grown since
    if (total > kMaxTaskBundleBytes) throw refuse_size();
    bundle.files.emplace(path, std::move(content));
  }
  bundle.id = TaskContentIdOfFiles(bundle.files);
  return bundle;
}

std::string UnpackTaskBundle(const TaskBundle& bundle, const std::string& cache_root) {
  std::string what = fmt::format("task bundle {} ({})", bundle.id, bundle.name);
  if (!TaskIdForm(bundle.id)) throw InputError(what, 0, "id", "not a task content id");
  for (const auto& [path, bytes] : bundle.files) {
    if (!PlainRelativePath(path))
      throw InputError(what, 0, path, "not a plain path inside the task folder");
  }
  fs::path root(cache_root), folder = root / bundle.id;
  fs::create_directories(root);
  std::error_code ec;
  if (fs::is_directory(folder, ec)) return CheckedCacheFolder(folder, bundle.id);
  OwnFolder written{MakeTempFolder(root, bundle.id)};
  for (const auto& [path, bytes] : bundle.files) WriteFile(written.path / path, bytes);
  if (TaskContentId(written.path.string()) != bundle.id)
    throw InputError(what, 0, "files", "they do not hash to the bundle's id (tampered or cut)");
  fs::rename(written.path, folder, ec);
  if (!ec) {
    written.path.clear();
    return folder.string();
  }
  if (!fs::is_directory(folder))
    throw fs::filesystem_error("cannot rename", written.path, folder, ec);
  return CheckedCacheFolder(folder, bundle.id);  // another process's got there first
}

nlohmann::json TaskBundleToJson(const TaskBundle& b) {
  nlohmann::json files = nlohmann::json::object();
  for (const auto& [path, bytes] : b.files) files[path] = Base64Encode(Bytes(bytes));
  return {{"id", b.id}, {"name", b.name}, {"files", std::move(files)}};
}

TaskBundle TaskBundleFromJson(const nlohmann::json& j) {
  TaskBundle b;
  b.id = j.at("id").get<std::string>();
  b.name = j.at("name").get<std::string>();
  const nlohmann::json& files = j.at("files");
  if (!files.is_object()) throw std::invalid_argument("task bundle: files is not an object");
  for (const auto& [path, text] : files.items()) {
    std::vector<std::byte> bytes = Base64Decode(text.get<std::string>());
    b.files.emplace(path, std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }
  return b;
}

}  // namespace kf
