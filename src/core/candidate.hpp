#pragma once
// What the judging stages exchange: a candidate (a kernel and one configuration of it) and a run
// request, the candidate with its compiled artifact when a builder made it (otherwise the runner
// compiles where the device is, as OpenCL does).

#include <optional>

#include "core/compile.hpp"
#include "core/kernel.hpp"

namespace kf {

struct Candidate {
  Kernel kernel;
  Config config;
};

struct RunRequest {
  Candidate candidate;
  std::optional<CompileResult> compiled;  // ok and with an artifact, when built elsewhere
};

}  // namespace kf
