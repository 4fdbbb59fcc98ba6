#pragma once
// How values become columns, shared by every store so a row means the same in each: the
// timestamp text, a proposal stored without its kernel (the kernel is in its own table, by id),
// a task bundle's files, and the JSON columns read back.

#include <nlohmann/json.hpp>
#include <string>

#include "core/proposal.hpp"
#include "core/task_bundle.hpp"

namespace kf {

// UTC with milliseconds ("2026-12-04T10:15:00.123Z"): sorts as text, places evaluations in time.
std::string StoreTimestamp();

// The `proposal` column: the proposal's JSON less its kernel, plus the kernel's path.
std::string ProposalColumn(const Proposal& p);
// The proposal again from its column and its kernel's row.
Proposal ProposalFromColumns(const std::string& column, const std::string& kernel_path,
                             const std::string& kernel_source);

// The `files` column of task_bundles: path → base64 of the bytes, as JSON text (any bytes survive
// a TEXT column), and the bundle again from its columns.
std::string TaskBundleFilesColumn(const TaskBundle& bundle);
TaskBundle TaskBundleFromColumns(const std::string& id, const std::string& name,
                                 const std::string& files);
// All the bundle's files together, in bytes (the `bytes` column).
long long TaskBundleBytes(const TaskBundle& bundle);

}  // namespace kf
