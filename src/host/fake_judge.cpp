#include "host/fake_judge.hpp"

#include <xxhash.h>

#include <string>

namespace kf {

JudgeResult FakeVerdict(const Candidate& candidate, int runners) {
  JudgeResult r;
  r.key = candidate.key;
  std::string text = candidate.kernel.source + ConfigToString(candidate.config);
  uint64_t h = XXH3_64bits(text.data(), text.size());
  Evaluation& ev = r.evaluation;
  ev.config = candidate.config;
  r.runner = static_cast<int>(h % static_cast<uint64_t>(runners));
  ev.device = "fake:" + std::to_string(r.runner);
  if (h % 7 == 0) {
    ev.status = Status::kCompileError;
    ev.reason = "a fake compile error (one candidate in seven)";
    return r;
  }
  double ms = 1.0 + static_cast<double>(h % 1000) / 100.0;
  ev.time = TimingStats{ms, ms, ms, 10};
  ev.baseline_time = TimingStats{5, 5, 5, 10};
  ev.speedup = 5 / ms;
  return r;
}

DeviceInfo FakeDevice(int index, const std::string& backend) {
  DeviceInfo d;
  d.backend = backend;
  d.index = index;
  d.name = "fake";
  d.arch = backend == "cuda" ? "sm_90" : "fake";
  d.vendor = "KernelFoundry";
  d.device_class = DeviceClass::kGpu;
  d.compute_units = 16;
  d.max_work_group_size = 1024;
  d.local_mem_bytes = int64_t{64} * 1024;
  d.global_mem_bytes = 16LL << 30;
  d.sub_group_width = 32;
  return d;
}

void FakeJudge::Submit(Candidate candidate, Done done, int /*pinned*/) {
  done(FakeVerdict(candidate, runners_));
}

}  // namespace kf
