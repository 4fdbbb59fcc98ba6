// How many verdicts a store takes per second: W writers (threads, each with its own store
// object and so its own connection) append N verdicts each to one run, B per PutEvaluations call
// (one transaction, one durable commit per call). The verdicts are the size the search stores.
//
//   kf_store_bench --store URL [--evaluations N] [--batch B] [--writers W]
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "store/store.hpp"

namespace {

kf::Evaluation SomeVerdict(int i) {
  kf::Evaluation ev;
  ev.status = kf::Status::kOk;
  ev.time = kf::TimingStats{0.1 + i * 1e-6, 0.09, 0.12, 25};
  ev.descriptor = {1, 2, 0};
  ev.compile_log = std::string(400, 'l');
  return ev;
}

}  // namespace

int main(int argc, char** argv) {
  std::string url;
  int evaluations = 2000, batch = 1, writers = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--store")) url = argv[i + 1];
    if (!std::strcmp(argv[i], "--evaluations")) evaluations = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--batch")) batch = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--writers")) writers = std::atoi(argv[i + 1]);
  }
  if (url.empty() || batch < 1 || writers < 1) {
    fmt::print(stderr,
               "usage: kf_store_bench --store URL [--evaluations N] [--batch B] "
               "[--writers W]\n");
    return 2;
  }
  std::string run =
      fmt::format("bench-{}", std::chrono::system_clock::now().time_since_epoch().count());
  kf::OpenStore(url)->OpenRun({run, "bench", "d", {}, ""});
  kf::Kernel kernel = kf::ParseKernel(
      "k.cl",
      "// @kernel k\n// @grid 1\n// @block 1\n__kernel void k(__global float* x) { x[0] = 1; }\n");
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      auto store = kf::OpenStore(url);
      for (int i = 0; i < evaluations; i += batch) {
        std::vector<kf::EvaluationWrite> writes;
        for (int j = i; j < std::min(i + batch, evaluations); ++j) {
          kf::Config c = {{"W", std::to_string(w)}, {"I", std::to_string(j)}};
          std::string cand = kf::CandidateId(kf::KernelId(kernel), c);
          writes.push_back({kernel, c, kf::EvaluationKey(cand, run, {}), SomeVerdict(j), {}});
        }
        store->PutEvaluations(run, writes);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  size_t stored = kf::OpenStore(url)->RunEvaluations(run).size();
  fmt::print("{} writers x {} verdicts, {} per transaction: {} stored in {:.2f} s = {:.0f}/s\n",
             writers, evaluations, batch, stored, seconds, static_cast<double>(stored) / seconds);
  return stored == static_cast<size_t>(writers) * static_cast<size_t>(evaluations) ? 0 : 1;
}
