#include "dist/propose_messages.hpp"

#include <stdexcept>

namespace kf {

namespace {

nlohmann::json ModelToJson(const ModelSettings& m) {
  return {{"name", m.name},
          {"base_url", m.base_url},
          {"model", m.model},
          {"temperature", m.temperature},
          {"max_tokens", m.max_tokens},
          {"max_completion_tokens", m.max_completion_tokens},
          {"reasoning_effort", m.reasoning_effort},
          {"context_tokens", m.context_tokens}};
}

ModelSettings ModelFromJson(const nlohmann::json& j) {
  ModelSettings m;
  m.name = j.value("name", "");
  m.base_url = j.at("base_url").get<std::string>();
  m.model = j.at("model").get<std::string>();
  m.temperature = j.value("temperature", m.temperature);
  m.max_tokens = j.value("max_tokens", m.max_tokens);
  m.max_completion_tokens = j.value("max_completion_tokens", 0);
  m.reasoning_effort = j.value("reasoning_effort", "");
  m.context_tokens = j.value("context_tokens", m.context_tokens);
  return m;
}

}  // namespace

nlohmann::json ProposeJobMessageToJson(const ProposeJobMessage& job) {
  nlohmann::json out = {{"run", job.run},
                        {"key", job.key},
                        {"reply_queue", job.reply_queue},
                        {"kind", job.kind},
                        {"timeout_s", job.timeout_s},
                        {"max_out", job.max_out},
                        {"label", job.label}};
  if (job.kind == "chat") {
    out["model"] = ModelToJson(job.model);
    out["messages"] = nlohmann::json::array();
    for (const ChatMessage& m : job.messages)
      out["messages"].push_back({{"role", m.role}, {"content", m.content}});
  } else {
    out["command"] = job.command;
    out["input"] = job.input;
  }
  return out;
}

ProposeJobMessage ProposeJobMessageFromJson(const nlohmann::json& j) {
  ProposeJobMessage job;
  job.run = j.at("run").get<std::string>();
  job.key = j.at("key").get<std::string>();
  job.reply_queue = j.at("reply_queue").get<std::string>();
  job.kind = j.at("kind").get<std::string>();
  job.timeout_s = j.value("timeout_s", job.timeout_s);
  job.max_out = j.value("max_out", job.max_out);
  job.label = j.value("label", "");
  if (job.kind == "chat") {
    job.model = ModelFromJson(j.at("model"));
    for (const nlohmann::json& m : j.at("messages"))
      job.messages.push_back({m.at("role").get<std::string>(), m.at("content").get<std::string>()});
  } else if (job.kind == "command") {
    job.command = j.at("command").get<std::string>();
    job.input = j.at("input").get<std::string>();
  } else {
    throw std::invalid_argument("unknown propose job kind '" + job.kind + "'");
  }
  return job;
}

nlohmann::json ProposeResultMessageToJson(const ProposeResultMessage& r) {
  return {{"run", r.run},
          {"key", r.key},
          {"worker", r.worker},
          {"seconds", r.seconds},
          {"chat",
           {{"ok", r.chat.ok},
            {"content", r.chat.content},
            {"finish_reason", r.chat.finish_reason},
            {"prompt_tokens", r.chat.prompt_tokens},
            {"completion_tokens", r.chat.completion_tokens},
            {"attempts", r.chat.attempts},
            {"http_status", r.chat.http_status},
            {"seconds", r.chat.seconds},
            {"error", r.chat.error}}},
          {"command", {{"out", r.command.out}, {"failure", r.command.failure}}}};
}

ProposeResultMessage ProposeResultMessageFromJson(const nlohmann::json& j) {
  ProposeResultMessage r;
  r.run = j.at("run").get<std::string>();
  r.key = j.at("key").get<std::string>();
  r.worker = j.value("worker", "");
  r.seconds = j.value("seconds", 0.0);
  const nlohmann::json& c = j.at("chat");
  r.chat.ok = c.value("ok", false);
  r.chat.content = c.value("content", "");
  r.chat.finish_reason = c.value("finish_reason", "");
  r.chat.prompt_tokens = c.value("prompt_tokens", 0);
  r.chat.completion_tokens = c.value("completion_tokens", 0);
  r.chat.attempts = c.value("attempts", 0);
  r.chat.http_status = c.value("http_status", 0);
  r.chat.seconds = c.value("seconds", 0.0);
  r.chat.error = c.value("error", "");
  const nlohmann::json& m = j.at("command");
  r.command.out = m.value("out", "");
  r.command.failure = m.value("failure", "");
  return r;
}

}  // namespace kf
