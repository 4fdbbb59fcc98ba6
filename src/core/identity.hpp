#pragma once
// Content identities: a kernel by the hash of its language, entry point and source; a candidate
// by its kernel and configuration; an evaluation by its candidate, the device (or devices) that
// may judge it and the settings that decide a verdict; a task by its folder's files. Every
// idempotent write is keyed by these.

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/kernel.hpp"

namespace kf {

std::string KernelId(const Kernel& kernel);
std::string CandidateId(const std::string& kernel_id, const Config& config);
std::string EvaluationKey(const std::string& candidate_id, const std::string& device,
                          const nlohmann::json& settings);

// A task folder by the hash of its files (their paths relative to it and their contents; hidden
// files and folders left out): what a worker checks a task bundle against. `toml_text`, when
// given, stands for the content of task.toml. What cannot be read counts as absent.
std::string TaskContentId(const std::string& dir,
                          const std::optional<std::string_view>& toml_text = std::nullopt);
// The files TaskContentId hashes: paths relative to `dir` ('/' between folders), sorted.
std::vector<std::string> TaskFolderFiles(const std::string& dir);
// The TaskContentId of a folder holding exactly these files (path as above → content).
std::string TaskContentIdOfFiles(const std::map<std::string, std::string>& files);

}  // namespace kf
