#include "test_postgres.hpp"

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>

#ifdef KF_HAVE_POSTGRES
#include "store/postgres/pg_connection.hpp"
#endif

namespace kf {

#ifndef KF_HAVE_POSTGRES
std::string TestPostgresUrl(std::string* why_not) {
  *why_not = "this build has no PostgreSQL store (KF_ENABLE_POSTGRES=OFF)";
  return "";
}
std::string FreshPostgresStoreUrl(const std::string&, std::string*) {
  return "";
}
void DropTestSchema(const std::string&, const std::string&) {}
void ExecInSchema(const std::string&, const std::string&, const std::string&) {}
#else

namespace {

namespace fs = std::filesystem;

std::string ReadLine(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

// A server running in a folder of services.sh's: its URL, with PGPASSFILE pointed at its password.
std::string UseServerIn(const fs::path& dir) {
  std::string status = fmt::format("'{}/services.sh' status '{}' postgres >/dev/null 2>&1",
                                   KF_SCRIPTS, dir.string());
  if (std::system(status.c_str()) != 0) return "";
  setenv("PGPASSFILE", (dir / "postgres" / "pgpass").c_str(), 1);
  return ReadLine(dir / "postgres" / "url");
}

// The server this process started; stopped (by the process that started it, not a forked
// child) when the process exits.
struct OwnServer {
  fs::path dir;
  pid_t owner = getpid();
  ~OwnServer() {
    if (dir.empty() || getpid() != owner) return;
    std::string stop = fmt::format("'{}/services.sh' stop '{}' postgres >/dev/null 2>&1",
                                   KF_SCRIPTS, dir.string());
    if (std::system(stop.c_str()) != 0) std::fprintf(stderr, "could not stop %s\n", dir.c_str());
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
};

std::string StartOwnServer(OwnServer& server, std::string* why_not) {
  char tmpl[] = "/tmp/kf-test-postgres-XXXXXX";
  if (!mkdtemp(tmpl)) {
    *why_not = "cannot make a temporary folder for a PostgreSQL server";
    return "";
  }
  server.dir = tmpl;
  fs::permissions(server.dir,
                  fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  std::string start = fmt::format("'{}/services.sh' start '{}' postgres >'{}/start.log' 2>&1",
                                  KF_SCRIPTS, server.dir.string(), server.dir.string());
  int rc = std::system(start.c_str());
  if (rc != 0) {
    std::string log = ReadLine(server.dir / "start.log");
    *why_not = WIFEXITED(rc) && WEXITSTATUS(rc) == 3
                   ? "no PostgreSQL server binaries here (scripts/setup.sh --tests installs them)"
                   : "scripts/services.sh could not start PostgreSQL: " + log;
    return "";
  }
  return UseServerIn(server.dir);
}

}  // namespace

std::string TestPostgresUrl(std::string* why_not) {
  static std::mutex mutex;
  static OwnServer own;
  static std::string url, reason;
  static bool tried = false;
  std::lock_guard<std::mutex> lock(mutex);
  if (!tried) {
    tried = true;
    if (const char* dir = std::getenv("KF_TEST_POSTGRES_DIR")) url = UseServerIn(dir);
    if (url.empty()) url = StartOwnServer(own, &reason);
  }
  *why_not = reason;
  return url;
}

std::string FreshPostgresStoreUrl(const std::string& server_url, std::string* schema) {
  static std::atomic<int> counter{0};
  std::string name = fmt::format("test_{}_{}", getpid(), counter++);
  PgConnection(server_url, server_url).Exec(fmt::format("CREATE SCHEMA {}", name));
  *schema = name;
  // Every table the store makes goes into that schema.
  return fmt::format("{}?options=-csearch_path%3D{}", server_url, name);
}

void DropTestSchema(const std::string& server_url, const std::string& schema) {
  PgConnection(server_url, server_url).Exec(fmt::format("DROP SCHEMA {} CASCADE", schema));
}

void ExecInSchema(const std::string& server_url, const std::string& schema,
                  const std::string& sql) {
  PgConnection conn(server_url, server_url);
  conn.Exec(fmt::format("SET search_path TO {}", schema));
  conn.ExecScript(sql);
}

#endif  // KF_HAVE_POSTGRES

}  // namespace kf
