#pragma once
// The broker's queue names, one place for them: jobs per kind and, for run jobs, per device kind
// (times are compared only within one kind), results and proposers' side effects per run, and the
// dead-letter queue that a job past its delivery limit ends in. Every part is a slug (lower-case
// letters, digits and '-'), so '.' separates parts only.

#include <string>
#include <string_view>

#include "core/device_info.hpp"
#include "dist/amqp_client.hpp"

namespace kf {

inline constexpr const char* kProposeQueue = "kf.propose";
inline constexpr const char* kDeadLetterQueue = "kf.dead";

// "NVIDIA H100 80GB HBM3" → "nvidia-h100-80gb-hbm3".
std::string QueueSlug(std::string_view text);

// kf.run.<backend>.<arch>.<name>: kf.run.cuda.sm-90.nvidia-h100-80gb-hbm3.
std::string RunQueueName(const DeviceInfo& device);
// A run job taken by this many workers that each died or lost their connection before answering
// is answered `crash` by the next worker instead of being run again (the job kills its judges).
inline constexpr int kRunAttempts = 3;
// The broker's backstop: past this many deliveries a run job goes to kf.dead. Above kRunAttempts
// by two, since a draining worker's requeue counts as a delivery too.
inline constexpr int kRunDeliveryLimit = kRunAttempts + 2;
// kf.run.<kind>.w.<worker>: one run worker's own queue beside its kind's, for the jobs pinned to
// its devices (the final re-verification's repeats of a candidate, all on one device).
std::string WorkerQueueName(const std::string& run_queue, std::string_view worker_id);
// The run queue's declaration (every declarer must give the same arguments).
QueueSpec RunQueueSpec(const std::string& name);

// kf.build.<backend>: CUDA's builders compile for any architecture the job names.
std::string BuildQueueName(std::string_view backend);
// kf.results.<run>.
std::string ResultsQueueName(std::string_view run_id);
// kf.proposals.<run>: what propose workers did for the run's proposer (kf.propose: its jobs,
// declared with RunQueueSpec, so a job that kills kRunAttempts workers is answered as failed).
std::string ProposalsQueueName(std::string_view run_id);

}  // namespace kf
