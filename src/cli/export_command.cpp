#include "cli/export_command.hpp"

#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <fstream>

#include "core/input_error.hpp"
#include "report/run_view.hpp"
#include "search/run_summary.hpp"
#include "store/store.hpp"
#include "torch/export_module.hpp"

namespace kf {

namespace fs = std::filesystem;

namespace {

std::string ModuleFileName(const std::string& run) {
  std::string name;
  for (char c : run) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "run_" + name;
  return name + ".py";
}

}  // namespace

int RunExport(const ExportArgs& a) {
  if (!a.torch)
    throw InputError("export", 0, "--torch",
                     "say what to export: --torch (a Python module); the best kernel's source "
                     "is already written by optimize (OUT/RUN/best.cu|.cl)");
  std::unique_ptr<Store> store = OpenStore(a.store, true);
  RunSummary summary = ReadRunSummary(*store, a.run);
  const FinalCheck* best = summary.Best();
  if (!best)
    throw InputError(RedactStoreUrl(a.store), 0, "run " + a.run,
                     "the run has no best kernel: no candidate passed the final re-verification");
  std::string why;
  std::optional<Task> task = TaskOfRun(summary.run, &why);
  if (!task)
    throw InputError(RedactStoreUrl(a.store), 0, "run " + a.run,
                     fmt::format("its task '{}' is not found ({})", summary.run.task, why));
  const Kernel& kernel = best->elite.kernel;
  const std::string out = a.out.empty() ? ModuleFileName(summary.run.name) : a.out;
  ExportOrigin origin{summary.run.name,   best->device,
                      best->elite.origin, fs::path(out).stem().string(),
                      best->median,       {}};
  const std::string sizes_name =
      summary.run.settings.is_object() ? summary.run.settings.value("sizes", "") : "";
  origin.sizes = task->BenchSizes(sizes_name, kernel.language == Language::kCuda ? "gpu" : "cpu");
  const std::string text = TorchModuleSource(*task, kernel, best->elite.config, origin);

  {
    std::string partial = out + ".partial";
    std::ofstream file(partial, std::ios::binary);
    file << text;
    file.close();
    if (!file) throw InputError(out, 0, "-o", "cannot write the module there");
    fs::rename(partial, out);
  }
  fmt::print("exported    {} ({} {} {}, {:.3f}x, sizes fixed at '{}' where no input gives them)\n",
             fs::absolute(out).lexically_normal().string(), LanguageName(kernel.language),
             kernel.EntryNames(), ConfigToString(best->elite.config), best->median,
             origin.sizes.name);
  return 0;
}

}  // namespace kf
