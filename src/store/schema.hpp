#pragma once
// The store's schema as numbered migrations, each written in SQLite's and PostgreSQL's dialect side
// by side (schema.cpp), so both stores have the same tables, columns and keys at every version.
// Migration N takes a store from version N-1 to N; append only, never edit a shipped one.

#include <span>

namespace kf {

struct Migration {
  const char* sqlite;
  const char* postgres;
};

std::span<const Migration> Migrations();
// The schema version this build creates and understands (the number of migrations).
int SchemaVersion();

}  // namespace kf
