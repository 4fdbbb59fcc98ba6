#pragma once
// The proposers' side effects: the only parts of proposing that touch the world outside the
// process, a chat request and a command run. Locally they happen where the proposer is; in a
// cluster, propose workers do them (dist/propose_worker.hpp), while choosing the model, the
// prompt, the bandits, the cost limit and reading the reply stay with the proposer. A service
// never throws for a failed effect: the failure comes back as a value, with its reason.

#include <cstddef>
#include <string>
#include <vector>

#include "propose/llm/chat_client.hpp"

namespace kf {

class ChatService {
 public:
  virtual ~ChatService() = default;
  // Whether it takes requests now (a cluster's: whether a propose worker is alive); when it does
  // not, the proposer does the request itself, as without a service.
  virtual bool Available() { return true; }
  // `model` may come without its API key: the service holds the keys it may use.
  virtual ChatReply Complete(const ModelSettings& model,
                             const std::vector<ChatMessage>& messages) = 0;
};

struct CommandRun {
  std::string out;      // its standard output (at most the bound)
  std::string failure;  // "" when it exited 0 in time within the size bound
};

// `/bin/sh -c command` with `input` on stdin, killed (its process group) at the deadline.
class CommandService {
 public:
  virtual ~CommandService() = default;
  // As ChatService::Available: when false, the command runs here.
  virtual bool Available() { return true; }
  virtual CommandRun Run(const std::string& command, const std::string& input, double timeout_s,
                         size_t max_out, const std::string& label) = 0;
};

// The command run in this process: its stderr passed on to ours, line by line, after `label: `.
CommandRun RunCommandHere(const std::string& command, const std::string& input, double timeout_s,
                          size_t max_out, const std::string& label);

}  // namespace kf
