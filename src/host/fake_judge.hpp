#pragma once
// A judge without a device, for tests and benchmarks of everything around judging (the search,
// the distributed roles' transport): a candidate's verdict is a function of its source and
// configuration alone, given at once. One in seven is a compile_error; the rest are `ok`, timed
// between 1 and 11 ms against a 5 ms baseline. `kfoundry worker --role run --fake` serves with it.

#include <string>

#include "core/device_info.hpp"
#include "host/judge.hpp"

namespace kf {

// `runners`: how many devices the verdicts are spread over (the runner is a function of the hash
// too), named "fake:N".
JudgeResult FakeVerdict(const Candidate& candidate, int runners = 1);

// What a fake worker says it serves: a device with common limits, named "fake", of `backend`
// ("opencl", or "cuda": then sm_90, so a coordinator routes its jobs through build workers).
DeviceInfo FakeDevice(int index = 0, const std::string& backend = "opencl");

class FakeJudge : public Judge {
 public:
  explicit FakeJudge(int runners = 1) : runners_(runners) {}
  void Submit(Candidate candidate, Done done, int pinned = -1) override;
  int runner_count() const override { return runners_; }

 private:
  int runners_;
};

}  // namespace kf
