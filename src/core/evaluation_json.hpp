#pragma once
// Evaluation <-> JSON, in the shape of the command-line contract (DESIGN.md). The executor
// process sends its verdicts to the supervisor in this form too, so the round trip is exact.

#include <nlohmann/json.hpp>

#include "core/evaluation.hpp"

namespace kf {

nlohmann::json EvaluationToJson(const Evaluation& ev);
// Throws nlohmann::json::exception on a malformed object.
Evaluation EvaluationFromJson(const nlohmann::json& j);

nlohmann::json ConfigToJson(const Config& config);
Config ConfigFromJson(const nlohmann::json& j);

std::optional<Status> ParseStatus(std::string_view name);

}  // namespace kf
