#pragma once
// How values become columns, shared by every store so a row means the same in each: the
// timestamp text, a proposal stored without its kernel (the kernel is in its own table, by id),
// and the JSON columns read back.

#include <nlohmann/json.hpp>
#include <string>

#include "core/proposal.hpp"

namespace kf {

// UTC with milliseconds ("2026-12-04T10:15:00.123Z"): sorts as text, places evaluations in time.
std::string StoreTimestamp();

// The `proposal` column: the proposal's JSON less its kernel, plus the kernel's path.
std::string ProposalColumn(const Proposal& p);
// The proposal again from its column and its kernel's row.
Proposal ProposalFromColumns(const std::string& column, const std::string& kernel_path,
                             const std::string& kernel_source);

}  // namespace kf
