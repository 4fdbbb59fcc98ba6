#include "dist/run_messages.hpp"

#include "core/codec.hpp"

namespace kf {

nlohmann::json RunJobMessageToJson(const RunJobMessage& job) {
  nlohmann::json out = {{"run", job.run},
                        {"results_queue", job.results_queue},
                        {"task_id", job.task_id},
                        {"task_name", job.task_name},
                        {"sizes", job.sizes},
                        {"settings", EvalSettingsToJson(job.settings)},
                        {"candidate", RunRequestToJson({job.candidate, job.compiled})}};
  if (!job.task_variant.empty()) out["task_variant"] = job.task_variant;
  if (!job.task_defines.empty()) out["task_defines"] = job.task_defines;
  if (!job.scope.empty()) out["scope"] = job.scope;
  if (job.pinned >= 0) out["pinned"] = job.pinned;
  if (!job.run_queue.empty()) out["run_queue"] = job.run_queue;
  if (job.target) out["target"] = DeviceInfoToJson(*job.target);
  return out;
}

RunJobMessage RunJobMessageFromJson(const nlohmann::json& j) {
  RunJobMessage job;
  job.run = j.at("run").get<std::string>();
  job.results_queue = j.at("results_queue").get<std::string>();
  job.task_id = j.at("task_id").get<std::string>();
  job.task_name = j.value("task_name", "");
  job.task_variant = j.value("task_variant", "");
  job.task_defines = j.value("task_defines", Config{});
  job.sizes = j.value("sizes", "");
  job.settings = EvalSettingsFromJson(j.at("settings"));
  RunRequest request = RunRequestFromJson(j.at("candidate"));
  job.candidate = std::move(request.candidate);
  job.compiled = std::move(request.compiled);
  job.scope = j.value("scope", "");
  job.pinned = j.value("pinned", -1);
  job.run_queue = j.value("run_queue", "");
  if (j.contains("target")) job.target = DeviceInfoFromJson(j["target"]);
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
