#include "cli/report_command.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/input_error.hpp"
#include "core/task.hpp"
#include "report/page.hpp"
#include "report/run_view.hpp"
#include "search/classifier.hpp"
#include "store/store.hpp"

namespace kf {

namespace fs = std::filesystem;

int RunReport(const ReportArgs& a) {
  std::unique_ptr<Store> store = OpenStore(a.store, true);
  std::optional<RunInfo> run = store->FindRun(a.run);
  if (!run) {
    std::string known;
    for (const RunInfo& r : store->Runs()) known += (known.empty() ? "" : ", ") + r.name;
    throw InputError(RedactStoreUrl(a.store), 0, "run " + a.run,
                     "no such run in this store" + (known.empty() ? std::string(" (it has none)")
                                                                  : " (it has: " + known + ")"));
  }
  std::string why;
  std::optional<Task> task = TaskOfRun(*run, &why);
  if (!task)
    fmt::print(stderr, "note: task '{}' not found ({}): the roofline has no byte or FLOP figures\n",
               run->task, why);
  const DescriptorSpace space = DescriptorSpace::Load(DefaultDescriptorFile());
  nlohmann::json data = {{"mode", "report"},
                         {"run", RunView(*store, *run, space, task ? &*task : nullptr)},
                         {"details", KernelDetails(*store, run->name, 4096)}};
  std::string out = a.out.empty() ? run->name + ".html" : a.out;
  std::string html = PageHtml(data);
  {
    std::string partial = out + ".partial";
    std::ofstream file(partial, std::ios::binary);
    file << html;
    file.close();
    if (!file) throw InputError(out, 0, "-o", "cannot write the report there");
    fs::rename(partial, out);
  }
  fmt::print("report      {} ({:.1f} KiB: {} evaluations, {} kernels of run {})\n",
             fs::absolute(out).lexically_normal().string(), html.size() / 1024.0,
             data["run"]["evaluations"].size(), data["details"].size(), run->name);
  return 0;
}

int RunServe(ServeOptions options) {
  // Beyond this machine, every request must bring the token: the environment's, or a new one.
  if (const char* given = std::getenv(kServeTokenEnv); given && *given) options.token = given;
  const bool generated = options.token.empty() && !IsLoopbackHost(options.host);
  if (generated) options.token = NewServeToken();
  Serve(options, [&](int port) {
    const std::string host =
        options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
    fmt::print("serving {} at http://{}:{}/ (Ctrl-C stops)\n", RedactStoreUrl(options.store_url),
               host, port);
    if (generated)
      fmt::print(
          "token       open http://{}:{}/?token={} (or send Authorization: Bearer {}); "
          "set {} to choose it\n",
          host, port, options.token, options.token, kServeTokenEnv);
    else if (!options.token.empty())
      fmt::print(
          "token       every request needs ${} (?token=... once, or Authorization: "
          "Bearer)\n",
          kServeTokenEnv);
    std::fflush(stdout);
  });
  return 0;
}

}  // namespace kf
