#pragma once
// One writer per run on a shared PostgreSQL store: the writer holds a session-level advisory lock
// keyed by the run (its name and the store's schema) for as long as its connection lives (a writer
// that dies, however it dies, lets go with its connection: no expiry to tune, no stale lease). The
// holder names itself in its session's application_name (pid, since when, host), which a refused
// writer reads back.

#include <string>

#include "store/postgres/pg_connection.hpp"

namespace kf {

// Takes the run's lease for this connection (again, if it holds it: leases nest); throws
// InputError naming the run and the holder if another session holds it.
void TakeRunLease(PgConnection& conn, const std::string& run);
void ReleaseRunLease(PgConnection& conn, const std::string& run);

}  // namespace kf
