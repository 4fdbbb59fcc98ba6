#pragma once
// One template's tuner fed through a judge: configurations are asked one at a time, each gets its
// place in the asking order, and verdicts reach the tuner in that order whatever order they come
// back in, so a seed gives one sequence however many devices and builders judge at once. The
// search keeps one feed per proposal being tuned; `kfoundry tune` drives one to its end
// (DriveTuning). Not thread-safe: its owner calls it from one thread.

#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "core/candidate.hpp"
#include "host/judge.hpp"
#include "tune/tune_template.hpp"

namespace kf {

class TuningFeed {
 public:
  explicit TuningFeed(TuneTemplate& tuning) : tuning_(tuning) {}

  struct Asked {
    int seq = 0;  // its place in the asking order
    Config config;
  };
  // The next configuration to judge, or nullopt when the tuner has nothing to ask now.
  std::optional<Asked> Ask();

  struct Told {
    Config config;
    JudgeResult result;
  };
  // The verdict for place `seq` (nullopt: its candidate was cancelled before it ran, and the
  // tuner hears nothing of it). Returns the verdicts told to the tuner now, in asking order: this
  // one and those that waited behind it, or none while an earlier place's verdict is out.
  std::vector<Told> Arrived(int seq, const Config& config, std::optional<JudgeResult> result);

  // Places asked whose verdicts have not arrived.
  int out() const { return asked_ - arrived_; }
  // Every verdict asked for has arrived and been told.
  bool Settled() const { return out() == 0 && waiting_.empty(); }

 private:
  TuneTemplate& tuning_;
  int asked_ = 0, arrived_ = 0, next_tell_ = 0;
  std::map<int, std::optional<Told>> waiting_;  // arrived ahead of their turn
};

// Drives `tuning` of `kernel` to its end through `judge`: as many configurations out as the
// judge has runners and builders to keep busy, each verdict told in the order it was asked and
// passed to `on_verdict` in that order. Throws std::runtime_error when the tool itself fails (a
// runner that cannot restart its executor).
void DriveTuning(TuneTemplate& tuning, const Kernel& kernel, Judge& judge,
                 const std::function<void(const Config&, const JudgeResult&)>& on_verdict);

}  // namespace kf
