#pragma once
// The SQLite store: one file, WAL journal with synchronous=NORMAL, every write in a
// BEGIN IMMEDIATE transaction, schema changes as numbered migrations recorded in schema_version
// (store/schema.cpp, docs/store.md). A process killed at any moment leaves every committed write
// and no partial one.

#include <memory>
#include <string>

#include "store/store.hpp"

namespace kf {

std::unique_ptr<Store> OpenSqliteStore(const std::string& path);

}  // namespace kf
