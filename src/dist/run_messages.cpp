#include "dist/run_messages.hpp"

#include "core/codec.hpp"

namespace kf {

nlohmann::json RunJobMessageToJson(const RunJobMessage& job) {
  return {{"run", job.run},
          {"results_queue", job.results_queue},
          {"task_id", job.task_id},
          {"task_name", job.task_name},
          {"sizes", job.sizes},
          {"settings", EvalSettingsToJson(job.settings)},
          {"candidate", RunRequestToJson({job.candidate, std::nullopt})}};
}

RunJobMessage RunJobMessageFromJson(const nlohmann::json& j) {
  RunJobMessage job;
  job.run = j.at("run").get<std::string>();
  job.results_queue = j.at("results_queue").get<std::string>();
  job.task_id = j.at("task_id").get<std::string>();
  job.task_name = j.value("task_name", "");
  job.sizes = j.value("sizes", "");
  job.settings = EvalSettingsFromJson(j.at("settings"));
  job.candidate = RunRequestFromJson(j.at("candidate")).candidate;
  return job;
}

nlohmann::json RunResultMessageToJson(const RunResultMessage& result) {
  return {{"run", result.run},
          {"worker", result.worker},
          {"seconds", result.seconds},
          {"reply", RunReplyToJson(result.reply)}};
}

RunResultMessage RunResultMessageFromJson(const nlohmann::json& j) {
  RunResultMessage result;
  result.run = j.at("run").get<std::string>();
  result.worker = j.value("worker", "");
  result.seconds = j.value("seconds", 0.0);
  result.reply = RunReplyFromJson(j.at("reply"));
  return result;
}

}  // namespace kf
