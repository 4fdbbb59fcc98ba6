#pragma once
// `--proposer llm` on the command line: the models from flags, environment or a models file, the
// client's limits, the prompt library, and the store as the journal of prompt component versions;
// and what a run's LLM use came to, read back from the store's proposals.

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/optimize_command.hpp"
#include "core/task.hpp"
#include "prompt/journal.hpp"
#include "propose/proposer.hpp"
#include "store/store.hpp"

namespace kf {

struct LlmProposerSetup {
  std::unique_ptr<PromptJournal> journal;  // outlives the proposer
  std::unique_ptr<Proposer> proposer;
  std::string description;  // "2 models (coder, small) at http://..." for the start line
};

LlmProposerSetup MakeLlmProposer(const OptimizeArgs& args, const Task& task, Store& store,
                                 const std::string& run);

}  // namespace kf
