#pragma once
// Content identities: a kernel by the hash of its language, entry point and source; a candidate
// by its kernel and configuration; an evaluation by its candidate, the device (or devices) that
// may judge it and the settings that decide a verdict. Every idempotent write is keyed by these.

#include <nlohmann/json.hpp>
#include <string>

#include "core/kernel.hpp"

namespace kf {

std::string KernelId(const Kernel& kernel);
std::string CandidateId(const std::string& kernel_id, const Config& config);
std::string EvaluationKey(const std::string& candidate_id, const std::string& device,
                          const nlohmann::json& settings);

}  // namespace kf
