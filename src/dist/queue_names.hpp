#pragma once
// The broker's queue names, one place for them: jobs per kind and, for run jobs, per device kind
// (times are compared only within one kind), results per run, and the dead-letter queue that a
// job past its delivery limit ends in. Every part is a slug (lower-case letters, digits and '-'),
// so '.' separates parts only.

#include <string>
#include <string_view>

#include "core/device_info.hpp"

namespace kf {

inline constexpr const char* kProposeQueue = "kf.propose";
inline constexpr const char* kDeadLetterQueue = "kf.dead";

// "NVIDIA H100 80GB HBM3" → "nvidia-h100-80gb-hbm3".
std::string QueueSlug(std::string_view text);

// kf.run.<backend>.<arch>.<name>: kf.run.cuda.sm-90.nvidia-h100-80gb-hbm3.
std::string RunQueueName(const DeviceInfo& device);
// kf.build.<backend>: CUDA's builders compile for any architecture the job names.
std::string BuildQueueName(std::string_view backend);
// kf.results.<run>.
std::string ResultsQueueName(std::string_view run_id);

}  // namespace kf
