#pragma once
// Where the versions of a run's prompt components are kept: the store, through an adapter the
// command line provides (the prompt layer does not depend on the store). A version is recorded
// when it is made and again as its statistics change; a resumed run reads them back.

#include <nlohmann/json.hpp>
#include <vector>

#include "prompt/library.hpp"

namespace kf {

class PromptJournal {
 public:
  virtual ~PromptJournal() = default;
  // Inserts `version` (with how it was made: `meta`), or updates the statistics of one stored.
  virtual void Record(const Component& version, const nlohmann::json& meta) = 0;
  // The run's versions, each component's oldest first.
  virtual std::vector<Component> Stored() = 0;
};

}  // namespace kf
