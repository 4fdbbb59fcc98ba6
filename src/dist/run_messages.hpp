#pragma once
// The messages of the run queues: a run job (one candidate of a run, with what a run worker needs
// to judge it as the coordinator's own judge would: the task by its content id, the benchmark
// size set, the judging settings) and its result (the reply, with the worker that made it). Both
// travel as the core codecs' JSON; the job's key is the candidate's evaluation key, the one
// identity a redelivered job and its duplicate result share.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/candidate.hpp"
#include "core/device_info.hpp"

namespace kf {

struct RunJobMessage {
  std::string run;  // the run it belongs to
  // Its cancellation scope: a worker skips the job once the store has the scope cancelled
  // (RemoteJudge::CancelPending); "" never is.
  std::string scope;
  std::string results_queue;  // where its result goes (ResultsQueueName(run))
  // On a build queue: the run queue a build worker forwards it to, built for `target`.
  std::string run_queue;
  std::optional<DeviceInfo> target;
  std::string task_id;    // the task bundle's content id (Store::FindTaskBundle)
  std::string task_name;  // for messages
  // The task's variant ("" none), which the worker applies to the bundle's folder, and its
  // defines, which a build worker (that reads no task) compiles with.
  std::string task_variant;
  Config task_defines;
  std::string sizes;      // the benchmark size set ("" = by device class)
  EvalSettings settings;  // the executor's own, for a candidate that brings none
  Candidate candidate;    // carries its key
  int pinned = -1;  // on a worker's own queue: the device of that worker that runs it (-1: any)
  std::optional<CompileResult> compiled;  // built by a build worker (ok or not)
};

struct RunResultMessage {
  std::string run;
  std::string worker;  // WorkerRecord::id of the worker that judged it
  double seconds = 0;  // the worker's wall time on it, from taking the job to the verdict
  RunReply reply;      // reply.key is the job's key
};

nlohmann::json RunJobMessageToJson(const RunJobMessage& job);
// Throws nlohmann::json::exception on a malformed job (InputError for a kernel whose annotations
// do not parse).
RunJobMessage RunJobMessageFromJson(const nlohmann::json& j);
nlohmann::json RunResultMessageToJson(const RunResultMessage& result);
RunResultMessage RunResultMessageFromJson(const nlohmann::json& j);

}  // namespace kf
