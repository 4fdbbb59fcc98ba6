#pragma once
// The report's one page: src/report/assets/page.html with its styles, its script and the data it
// shows put in place, so the result needs nothing else (the report) or only the JSON endpoints
// of `kfoundry serve` (the dashboard, whose data says so).

#include <nlohmann/json.hpp>
#include <string>

namespace kf {

// The page with `data` (docs/report.md: mode, run, details, ...) inlined. Every '<' in the data
// is written as \u003c, so no string in it can close the script element that holds it.
std::string PageHtml(const nlohmann::json& data);

}  // namespace kf
