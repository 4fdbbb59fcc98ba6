#pragma once
// `--proposer llm` on the command line: the store as the journal of a run's prompt component
// versions (the proposer itself is made by propose/make_proposer.hpp).

#include <memory>
#include <string>

#include "prompt/journal.hpp"
#include "store/store.hpp"

namespace kf {

std::unique_ptr<PromptJournal> MakeStorePromptJournal(Store& store, const std::string& run);

}  // namespace kf
