#pragma once
// A PostgreSQL server for the store tests: the one ctest's fixture started (KF_TEST_POSTGRES_DIR,
// tests/CMakeLists.txt), else one this test binary starts on loopback in a temporary folder with
// scripts/services.sh and stops when it exits. Each test gets a schema of its own in it, so tests
// run side by side on one server without seeing each other.

#include <string>

namespace kf {

// The server's URL (its password in the PGPASSFILE this sets), or "" with `why_not` saying why
// there is none (no server binaries: the caller skips).
std::string TestPostgresUrl(std::string* why_not);

// A fresh, empty schema on the test server and the URL of a store in it; DropTestSchema removes it.
std::string FreshPostgresStoreUrl(const std::string& server_url, std::string* schema);
void DropTestSchema(const std::string& server_url, const std::string& schema);

// Runs SQL in `schema` (a test's way to reach behind the store).
void ExecInSchema(const std::string& server_url, const std::string& schema, const std::string& sql);

}  // namespace kf
