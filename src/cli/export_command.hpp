#pragma once
// `kfoundry export RUN --torch [-o FILE.py]`: a run's best kernel (the verified winner of its
// final re-verification, with its configuration) as a Python module with KernelBench's ModelNew
// and a torch.library op (docs/pytorch.md "Exporting the best kernel").

#include <string>

namespace kf {

struct ExportArgs {
  std::string run;
  std::string store = "sqlite:kfoundry.db";
  bool torch = false;
  std::string out;  // default: RUN.py, the name made an importable module name
};

int RunExport(const ExportArgs& args);

}  // namespace kf
