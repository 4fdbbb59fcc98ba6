#include "store/postgres/run_lease.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "core/host_name.hpp"
#include "core/input_error.hpp"
#include "store/rows.hpp"

namespace kf {

namespace {

// The run's lock key: a 64-bit hash the server computes (the same on every client) of the run's
// name and the schema the store is in (two stores in one database have runs of their own).
constexpr const char* kRunKey =
    "hashtextextended('kfoundry run ' || COALESCE(current_schema(), '') || '.' || $1, 0)";

// "pid 4711 since 2026-12-07T12:00:00Z host gpu-node-17": the host last, so that the server's
// 63-byte limit on application_name cuts only a long host name.
std::string HolderName() {
  std::string since = StoreTimestamp();
  since = since.substr(0, since.find('.')) + "Z";
  return fmt::format("kfoundry pid {} since {} host {}", getpid(), since, HostName());
}

std::string Holder(PgConnection& conn, const std::string& run) {
  PgResult r = conn.Exec(fmt::format("SELECT a.application_name, a.pid FROM pg_locks l JOIN "
                                     "pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = "
                                     "'advisory' AND l.granted AND l.objsubid = 1 AND l.database = "
                                     "(SELECT oid FROM pg_database WHERE datname = "
                                     "current_database()) AND ((l.classid::bigint << 32) | "
                                     "l.objid::bigint) = {}",
                                     kRunKey),
                         {run});
  if (r.rows() == 0) return "a writer that has just let go; try again";
  std::string name = r.text(0, 0);
  if (name.rfind("kfoundry ", 0) == 0) return name.substr(9);
  return fmt::format("server process {}{}", r.text(0, 1), name.empty() ? "" : ", " + name);
}

}  // namespace

void TakeRunLease(PgConnection& conn, const std::string& run) {
  PgResult r = conn.Exec(fmt::format("SELECT pg_try_advisory_lock({})", kRunKey), {run});
  if (!r.boolean(0, 0)) {
    throw InputError(conn.printable(), 0, "run " + run,
                     fmt::format("another kfoundry is writing this run ({}); one writer per run: "
                                 "wait for it to end, or stop it and resume the run",
                                 Holder(conn, run)));
  }
  conn.Exec("SELECT set_config('application_name', $1, false)", {HolderName()});
}

void ReleaseRunLease(PgConnection& conn, const std::string& run) {
  conn.Exec(fmt::format("SELECT pg_advisory_unlock({})", kRunKey), {run});
}

}  // namespace kf
