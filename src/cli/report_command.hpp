#pragma once
// `kfoundry report`: one run of a store as a self-contained HTML file; `kfoundry serve`: every
// run of a store as a live dashboard with JSON endpoints (docs/report.md).

#include <string>

#include "report/server.hpp"

namespace kf {

struct ReportArgs {
  std::string run;
  std::string store = "sqlite:kfoundry.db";
  std::string out;  // default: RUN.html
};

int RunReport(const ReportArgs& args);
int RunServe(ServeOptions options);

}  // namespace kf
