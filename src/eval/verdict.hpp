#pragma once
// Comparison figures into a verdict, in the same words whichever path (device or host) made
// them: never-written elements, NaN/Inf where the reference is finite, elements out of tolerance
// (with the first one's value and the expected one).

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "backend/device.hpp"
#include "core/evaluation.hpp"
#include "core/task.hpp"
#include "eval/compare.hpp"

namespace kf {

// Sets the evaluation's status and reason; false, so that a check can `return Fail(...)`.
bool Fail(Evaluation& ev, Status s, std::string reason);
// The output matched the previous launch's reference, not this one's: state carried over.
bool CarriedOver(Evaluation& ev, const std::string& where);
// The compile log with the driver's name for the source (PoCL's temporary file, "<kernel>",
// NVRTC's "candidate.cu") replaced by `path`, the kernel's own file (the source is compiled as it
// is, so the lines match): FILE:LINE:COL then points at what the user wrote. "" keeps the log.
std::string CompileLogFor(const std::string& log, const std::string& path);
// A compile that failed with `log`: a compile error whose reason is the log's first line.
bool CompileFailed(Evaluation& ev, const std::string& log, const std::string& path,
                   const DeviceInfo& info);
// A launch sequence that failed with `error` at `where`: a launch error, with hints for its
// launches.
bool LaunchFailed(Evaluation& ev, const std::string& error, std::span<const LaunchStep> steps,
                  const DeviceInfo& info, const std::string& where);

using Verdict = std::optional<std::pair<Status, std::string>>;

// `first_bad(reference)` reads the output's (false) or the reference's (true) element at
// figures.first_bad; called only for an out-of-tolerance verdict.
Verdict VerdictFrom(const ArgSpec& arg, const Figures& f, const Tolerance& tol,
                    const std::string& where, const std::function<double(bool)>& first_bad);

// The figures of every output into the evaluation (the largest errors, the share over 1%).
void RecordFigures(const Figures& total, Evaluation& ev);

}  // namespace kf
