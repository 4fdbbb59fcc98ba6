#pragma once
// `kfoundry serve`: the report's page for every run of a store, live, and the JSON it is drawn
// from under /api/ (docs/report.md). Read-only: it never writes to the store.

#include <functional>
#include <string>

namespace kf {

inline constexpr const char* kServeTokenEnv = "KFOUNDRY_SERVE_TOKEN";

struct ServeOptions {
  std::string store_url = "sqlite:kfoundry.db";
  std::string host = "127.0.0.1";
  int port = 8765;  // 0: any free port
  // Asked of every request when set: `Authorization: Bearer TOKEN`, or `?token=TOKEN` once (which
  // sets a cookie, so a browser's page and its API calls carry it), else 401.
  std::string token;
};

// Whether `host` is this machine alone (127.0.0.0/8, ::1, localhost): served without a token.
bool IsLoopbackHost(const std::string& host);
// 32 hex digits from the system's random source.
std::string NewServeToken();

// Serves until the process is stopped. Calls `listening` with the bound port once requests are
// accepted. Throws InputError for an unusable store, address or port.
void Serve(const ServeOptions& options, const std::function<void(int port)>& listening);

}  // namespace kf
