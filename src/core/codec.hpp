#pragma once
// The JSON codec of every value type that crosses a stage: configurations, evaluations (in the
// shape of the command-line contract, DESIGN.md), device properties, compile requests and results
// (binaries as base64), run requests, elites, proposal requests and proposals. The executor and
// builder pipes are one transport of these; a queue between workers would be another. Decoders
// throw nlohmann::json::exception on a malformed object.

#include <nlohmann/json.hpp>
#include <optional>

#include "core/candidate.hpp"
#include "core/compile.hpp"
#include "core/device_info.hpp"
#include "core/elite.hpp"
#include "core/evaluation.hpp"
#include "core/proposal.hpp"

namespace kf {

struct Task;

nlohmann::json ConfigToJson(const Config& config);
Config ConfigFromJson(const nlohmann::json& j);

std::optional<Status> ParseStatus(std::string_view name);
nlohmann::json EvaluationToJson(const Evaluation& ev);
Evaluation EvaluationFromJson(const nlohmann::json& j);

nlohmann::json DeviceInfoToJson(const DeviceInfo& d);
DeviceInfo DeviceInfoFromJson(const nlohmann::json& j);

nlohmann::json CompileRequestToJson(const CompileRequest& r);
CompileRequest CompileRequestFromJson(const nlohmann::json& j);
nlohmann::json CompileResultToJson(const CompileResult& r);
CompileResult CompileResultFromJson(const nlohmann::json& j);

// A kernel travels as its path (for messages and its language) and source; decoding parses the
// annotations again (InputError for a bad one).
nlohmann::json KernelToJson(const Kernel& k);
Kernel KernelFromJson(const nlohmann::json& j);

nlohmann::json EvalSettingsToJson(const EvalSettings& s);
// Fields it lacks keep their thorough defaults.
EvalSettings EvalSettingsFromJson(const nlohmann::json& j);

nlohmann::json RunRequestToJson(const RunRequest& r);
RunRequest RunRequestFromJson(const nlohmann::json& j);

nlohmann::json EliteToJson(const Elite& e);
Elite EliteFromJson(const nlohmann::json& j);

// The task as a proposer sees it: name, description, op class, arguments (name, type, role,
// shape), size sets, tolerance, cost model, and the reference kernel's source in `language` (the
// exact semantics). `tasks --json` lists the same object less the sources.
nlohmann::json TaskToJson(const Task& t, std::optional<Language> with_reference = std::nullopt);

// The request, with the task's object (TaskToJson with its reference source) under "task" when
// `task` is given (what a command proposer reads), else null there; "task_id" always.
nlohmann::json ProposalRequestToJson(const ProposalRequest& r, const Task* task = nullptr);
// Throws nlohmann::json::exception (or InputError for a kernel whose annotations do not parse).
ProposalRequest ProposalRequestFromJson(const nlohmann::json& j);
nlohmann::json ProposalToJson(const Proposal& p);
Proposal ProposalFromJson(const nlohmann::json& j);

nlohmann::json RunReplyToJson(const RunReply& r);
RunReply RunReplyFromJson(const nlohmann::json& j);

nlohmann::json ProposalOutcomeToJson(const ProposalOutcome& o);
ProposalOutcome ProposalOutcomeFromJson(const nlohmann::json& j);
std::optional<ProposalVerdict> ParseProposalVerdict(std::string_view name);

nlohmann::json SearchEvaluationToJson(const SearchEvaluation& e);
SearchEvaluation SearchEvaluationFromJson(const nlohmann::json& j);

std::string Base64Encode(const std::vector<std::byte>& bytes);
// Throws std::invalid_argument on a character outside the alphabet.
std::vector<std::byte> Base64Decode(const std::string& text);

}  // namespace kf
