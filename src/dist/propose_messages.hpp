#pragma once
// The messages of the propose queue: a proposer's side effect to be done by a propose worker (a
// chat request to a model, or a command run with a request on its stdin) and what came of it.
// A chat job names its model without the API key: the worker that holds a key adds it.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "propose/effects.hpp"

namespace kf {

struct ProposeJobMessage {
  std::string run;
  std::string key;          // unique within the run: matches the result to its caller
  std::string reply_queue;  // ProposalsQueueName(run)
  std::string kind;         // "chat" | "command"
  ModelSettings model;      // chat: api_key left out
  std::vector<ChatMessage> messages;
  std::string command, input;  // command
  double timeout_s = 300;
  size_t max_out = size_t{1} << 20;
  std::string label;  // for the worker's log lines ("proposer p12")
};

struct ProposeResultMessage {
  std::string run, key;
  std::string worker;  // WorkerRecord::id
  double seconds = 0;  // the worker's wall time on it
  ChatReply chat;      // kind chat
  CommandRun command;  // kind command
};

nlohmann::json ProposeJobMessageToJson(const ProposeJobMessage& job);
// Throws nlohmann::json::exception (or std::invalid_argument for an unknown kind) on a malformed
// job.
ProposeJobMessage ProposeJobMessageFromJson(const nlohmann::json& j);
nlohmann::json ProposeResultMessageToJson(const ProposeResultMessage& result);
ProposeResultMessage ProposeResultMessageFromJson(const nlohmann::json& j);

}  // namespace kf
