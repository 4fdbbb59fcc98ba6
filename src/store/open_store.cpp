// Store URLs to implementations: the one place that knows every kind of store.
#include <filesystem>

#include "core/input_error.hpp"
#include "store/sqlite/sqlite_store.hpp"
#include "store/store.hpp"
#ifdef KF_HAVE_POSTGRES
#include "store/postgres/postgres_store.hpp"
#endif

namespace kf {

namespace {

bool IsPostgresUrl(const std::string& url) {
  return url.rfind("postgresql://", 0) == 0 || url.rfind("postgres://", 0) == 0;
}

}  // namespace

std::string RedactStoreUrl(const std::string& url) {
  std::string out = url;
  size_t scheme = out.find("://");
  if (scheme != std::string::npos) {
    size_t start = scheme + 3;
    size_t end = out.find_first_of("/?#", start);
    if (end == std::string::npos) end = out.size();
    size_t at = out.rfind('@', end - 1);
    if (at != std::string::npos && at >= start) {
      size_t colon = out.find(':', start);
      if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  // A password given as a parameter: ...?password=SECRET&...
  for (size_t p = out.find("password="); p != std::string::npos; p = out.find("password=", p + 1)) {
    if (p > 0 && out[p - 1] != '?' && out[p - 1] != '&') continue;
    size_t value = p + 9;
    size_t end = out.find_first_of("&#", value);
    out.replace(value, (end == std::string::npos ? out.size() : end) - value, "***");
  }
  return out;
}

std::unique_ptr<Store> OpenStore(const std::string& url, bool must_exist) {
  if (IsPostgresUrl(url)) {
    if (RedactStoreUrl(url) != url)
      throw InputError(RedactStoreUrl(url), 0, "--store",
                       "a password in the URL would show in ps and in logs: give it in "
                       "PGPASSWORD or ~/.pgpass (or the file PGPASSFILE names) instead");
#ifdef KF_HAVE_POSTGRES
    return OpenPostgresStore(url, RedactStoreUrl(url), must_exist);
#else
    throw InputError(RedactStoreUrl(url), 0, "--store",
                     "this build has no PostgreSQL store (built with KF_ENABLE_POSTGRES=OFF)");
#endif
  }
  std::string path = url;
  if (url.rfind("sqlite:", 0) == 0) {
    path = url.substr(7);
  } else if (url.find("://") != std::string::npos) {
    throw InputError(RedactStoreUrl(url), 0, "--store",
                     "unknown store (sqlite:PATH or postgresql://USER@HOST:PORT/DB)");
  }
  if (path.empty()) throw InputError(url, 0, "--store", "no file name after sqlite:");
  if (must_exist && !std::filesystem::exists(path))
    throw InputError(url, 0, "--store",
                     "no store there (give --store sqlite:PATH of a run's store)");
  return OpenSqliteStore(path);
}

}  // namespace kf
