#pragma once
// `kfoundry serve`: the report's page for every run of a store, live, and the JSON it is drawn
// from under /api/ (docs/report.md). Read-only: it never writes to the store.

#include <functional>
#include <string>

namespace kf {

struct ServeOptions {
  std::string store_url = "sqlite:kfoundry.db";
  std::string host = "127.0.0.1";
  int port = 8765;  // 0: any free port
};

// Serves until the process is stopped. Calls `listening` with the bound port once requests are
// accepted. Throws InputError for an unusable store, address or port.
void Serve(const ServeOptions& options, const std::function<void(int port)>& listening);

}  // namespace kf
