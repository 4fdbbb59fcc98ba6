// Store URLs to implementations: the one place that knows every kind of store.
#include <filesystem>

#include "core/input_error.hpp"
#include "store/sqlite/sqlite_store.hpp"
#include "store/store.hpp"

namespace kf {

std::unique_ptr<Store> OpenStore(const std::string& url, bool must_exist) {
  std::string path = url;
  if (url.rfind("sqlite:", 0) == 0) {
    path = url.substr(7);
  } else if (url.find("://") != std::string::npos) {
    throw InputError(url, 0, "--store", "unknown store (this build has sqlite:PATH)");
  }
  if (path.empty()) throw InputError(url, 0, "--store", "no file name after sqlite:");
  if (must_exist && !std::filesystem::exists(path))
    throw InputError(url, 0, "--store",
                     "no store there (give --store sqlite:PATH of a run's store)");
  return OpenSqliteStore(path);
}

}  // namespace kf
