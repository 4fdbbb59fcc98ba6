#pragma once
// The PostgreSQL store (libpq): the same schema and numbered migrations as SQLite's
// (store/schema.cpp), recorded in schema_version; every write in one transaction that returns once
// its COMMIT is durable (synchronous_commit on); appends to a run serialised by its row's lock, so
// its order has no gap and no twin however many writers append; one writer per run holds its lease
// (run_lease.hpp). One connection, shared by the caller's threads.

#include <memory>
#include <string>

#include "store/store.hpp"

namespace kf {

// `url`: postgresql://...; `printable`: the same with its password redacted, for messages. With
// `must_exist`, a database without a kfoundry schema is refused (a reader never creates one).
std::unique_ptr<Store> OpenPostgresStore(const std::string& url, const std::string& printable,
                                         bool must_exist);

}  // namespace kf
