#pragma once
// The wire between kfoundry and its worker processes (executors, builders): newline-delimited
// JSON on a pipe pair, fds 3 (requests) and 4 (replies) in the worker. Every message is one of
// the core codecs' objects wrapped with an id:
//   worker → parent  {"ready": true, ...} once, then {"phase": "compile"|"launch"|"host",
//                    "step", "sizes", "seed", "launch", "compiling_s"} as an evaluation moves
//                    on (where it is, for a verdict if the worker dies there; how long a first
//                    launch may compile), and {"id": N, ...} answers
//   parent → worker  {"id": N, "op": "run", "run": RunRequest}
//                    {"id": N, "op": "compile", "compile": CompileRequest}
// A worker that cannot start sends {"fatal": message, "exit_code": N} and exits.

#include <nlohmann/json.hpp>
#include <string>

namespace kf {

// Writes all of `data` (retrying on EINTR); false when the other end is gone.
bool WriteAll(int fd, const std::string& data);
// One message and its newline.
bool SendMessage(int fd, const nlohmann::json& message);

// Reads newline-delimited messages from a blocking fd (the worker's side). nullopt at end of
// input (the parent closed the channel); lines that are not JSON objects are skipped.
class MessageReader {
 public:
  explicit MessageReader(int fd) : fd_(fd) {}
  std::optional<nlohmann::json> Next();

 private:
  int fd_;
  std::string pending_;
};

// "SIGSEGV", or "signal N" for one without a name.
std::string SignalName(int sig);

}  // namespace kf
