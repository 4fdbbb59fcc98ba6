#include "core/data_path.hpp"

#include <cstdlib>
#include <filesystem>

namespace kf {

std::string DataPath(const char* env_var, const std::string& name, const std::string& source_path) {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv(env_var); env && *env) return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path installed = (exe.parent_path() / "../share/kfoundry" / name).lexically_normal();
    if (fs::exists(installed, ec)) return installed.string();
  }
  return source_path;
}

}  // namespace kf
