#pragma once
// A run as the report and the dashboard show it: one JSON value read from the store (the shape
// is docs/report.md's), a kernel's details, and the list of a store's runs. Everything here is
// read-only and derived from what the store holds; nothing is measured.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/task.hpp"
#include "search/classifier.hpp"
#include "store/store.hpp"

namespace kf {

// Thrown for a run or kernel the store does not have (a 404 for the dashboard).
class NotFound : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `run` as the store lists it (Store::FindRun); `task`, when given, supplies the roofline's bytes
// and FLOPs at the timed sizes.
nlohmann::json RunView(Store& store, const RunInfo& run, const DescriptorSpace& space,
                       const Task* task);

// One kernel of a run: its source and its parent's, its proposal with the proposer's trail
// (prompt, replies, tokens), and every evaluation of it with all figures. `log_limit` cuts each
// compile log (0: whole).
nlohmann::json KernelDetail(Store& store, const std::string& run, const std::string& kernel_id,
                            size_t log_limit = 0);

// The details of every kernel the run proposed or evaluated, by id, in one pass over the store
// (for the self-contained report); `parent_source` is left null (the parent has its own entry).
nlohmann::json KernelDetails(Store& store, const std::string& run, size_t log_limit);

// Every run of the store with its size, best speedup and whether it finished.
nlohmann::json RunList(Store& store);

// The task a run searched, for the roofline's bytes and FLOPs: its folder if it is still there,
// else the bundled task of that name; none (with `why`) when neither loads.
std::optional<Task> TaskOfRun(const RunInfo& run, std::string* why = nullptr);

// Seconds since the epoch of a store time ("2026-12-04T10:15:00.123Z", milliseconds optional);
// nullopt when it is not one.
std::optional<double> StoreTimeSeconds(const std::string& text);

}  // namespace kf
