#pragma once
// The final re-verification: the archive's top elites re-evaluated on fresh inputs, several times
// each, on one device (timed interleaved with the baseline, as every evaluation is). Each run is
// stored as an evaluation (purpose "final") keyed by its repeat, so re-verifying a finished run
// reads its verdicts back instead of judging again. RunSummary reads the outcome from the store.

#include <nlohmann/json.hpp>
#include <string>

#include "host/judge.hpp"
#include "search/archive.hpp"
#include "store/store.hpp"

namespace kf {

struct ReverifySettings {
  std::string run, devices;  // as for the search's keys
  nlohmann::json eval_settings = nlohmann::json::object();
  int top = 3, repeats = 3;
  int runner = 0;  // the device that re-verifies
};

// Returns the number of evaluations judged now (the rest came from the store).
int Reverify(const Archive& archive, Judge& judge, Store& store, const ReverifySettings& s);

}  // namespace kf
