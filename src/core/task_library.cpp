#include "core/task_library.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "core/input_error.hpp"

namespace kf {

namespace fs = std::filesystem;

std::vector<std::string> TaskSearchDirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("KF_TASKS_DIR"); env && *env) dirs.emplace_back(env);
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    dirs.push_back((exe.parent_path() / "../share/kfoundry/tasks").lexically_normal().string());
  dirs.emplace_back(KF_SOURCE_TASKS_DIR);
  return dirs;
}

std::pair<std::string, std::string> SplitTaskVariant(const std::string& text) {
  const size_t slash = text.rfind('/');
  const size_t start = slash == std::string::npos ? 0 : slash + 1;
  const size_t dot = text.find('.', start);
  if (dot == std::string::npos || dot == start || dot + 1 == text.size()) return {text, ""};
  return {text.substr(0, dot), text.substr(dot + 1)};
}

std::string JoinTaskVariant(const std::string& base, const std::string& variant) {
  return variant.empty() ? base : base + "." + variant;
}

Task FindTask(const std::string& name_or_path) {
  if (fs::exists(fs::path(name_or_path) / "task.toml")) return LoadTask(name_or_path);
  // TASK.VARIANT: the task (a folder or a bundled name) made as its variant.
  const auto [task, variant] = SplitTaskVariant(name_or_path);
  if (!variant.empty() && fs::exists(fs::path(task) / "task.toml")) return LoadTask(task, variant);
  if (task.find('/') == std::string::npos) {
    for (const std::string& dir : TaskSearchDirs()) {
      fs::path candidate = fs::path(dir) / task;
      if (fs::exists(candidate / "task.toml")) return LoadTask(candidate.string(), variant);
    }
  }
  std::string names;
  for (const Task& t : BundledTasks()) {
    names += " " + t.name;
    for (const std::string& v : t.variants) names += " " + JoinTaskVariant(t.name, v);
  }
  throw InputError(name_or_path, 0, "TASK",
                   "not a folder with task.toml, nor a bundled task (bundled:" +
                       (names.empty() ? " none" : names) + ")");
}

std::vector<Task> BundledTasks() {
  std::vector<Task> tasks;
  for (const std::string& dir : TaskSearchDirs()) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> folders;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (fs::exists(entry.path() / "task.toml")) folders.push_back(entry.path());
    }
    std::sort(folders.begin(), folders.end());
    for (const auto& f : folders) tasks.push_back(LoadTask(f.string()));
    if (!tasks.empty()) break;  // the first folder that has tasks is the library
  }
  return tasks;
}

std::string ResolveTaskKernel(const Task& task, const std::string& kernel, Language lang) {
  if (fs::exists(kernel)) return kernel;
  auto lookup = [&](const std::map<Language, std::string>& files) -> std::string {
    auto it = files.find(lang);
    return it == files.end() ? "" : task.PathOf(it->second);
  };
  if (kernel == "baseline" && !lookup(task.baseline).empty()) return lookup(task.baseline);
  if (kernel == "reference" && !lookup(task.reference).empty()) return lookup(task.reference);
  std::string known = "baseline, reference";
  if (auto it = task.templates.find(lang); it != task.templates.end()) {
    for (const std::string& f : it->second) {
      std::string stem = fs::path(f).stem().string();
      if (stem == kernel) return task.PathOf(f);
      known += ", " + stem;
    }
  }
  throw InputError(kernel, 0, "KERNEL",
                   fmt::format("no such file, nor a {} kernel of task '{}' ({})",
                               LanguageName(lang), task.name, known));
}

}  // namespace kf
