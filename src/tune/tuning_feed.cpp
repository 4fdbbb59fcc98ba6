#include "tune/tuning_feed.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>

namespace kf {

std::optional<TuningFeed::Asked> TuningFeed::Ask() {
  std::vector<Config> next = tuning_.Ask(1);
  if (next.empty()) return std::nullopt;
  return Asked{asked_++, std::move(next.front())};
}

std::vector<TuningFeed::Told> TuningFeed::Arrived(int seq, const Config& config,
                                                  std::optional<JudgeResult> result) {
  ++arrived_;
  if (result)
    waiting_[seq] = Told{config, std::move(*result)};
  else
    waiting_[seq] = std::nullopt;
  std::vector<Told> told;
  while (!waiting_.empty() && waiting_.begin()->first == next_tell_) {
    if (std::optional<Told>& t = waiting_.begin()->second) {
      tuning_.Tell(t->config, MeasurementOf(t->result.evaluation));
      told.push_back(std::move(*t));
    }
    waiting_.erase(waiting_.begin());
    ++next_tell_;
  }
  return told;
}

void DriveTuning(TuneTemplate& tuning, const Kernel& kernel, Judge& judge,
                 const std::function<void(const Config&, const JudgeResult&)>& on_verdict) {
  TuningFeed feed(tuning);
  struct Back {
    int seq;
    Config config;
    JudgeResult result;
  };
  std::mutex mutex;
  std::condition_variable arrived;
  std::deque<Back> back;  // verdicts from the judge's threads
  std::string tool_error;
  const int target = judge.runner_count() * 2 + judge.build_jobs();
  for (;;) {
    while (tool_error.empty() && feed.out() < target) {
      std::optional<TuningFeed::Asked> next = feed.Ask();
      if (!next) break;
      judge.Submit({kernel, next->config},
                   [&, seq = next->seq, config = next->config](JudgeResult r) {
                     std::lock_guard<std::mutex> lock(mutex);
                     back.push_back({seq, config, std::move(r)});
                     arrived.notify_all();
                   });
    }
    if (feed.out() == 0) break;  // nothing out and nothing more to ask: done
    std::unique_lock<std::mutex> lock(mutex);
    arrived.wait(lock, [&] { return !back.empty(); });
    Back b = std::move(back.front());
    back.pop_front();
    lock.unlock();
    if (!b.result.tool_error.empty() && tool_error.empty()) tool_error = b.result.tool_error;
    for (const TuningFeed::Told& t : feed.Arrived(b.seq, b.config, std::move(b.result)))
      if (tool_error.empty()) on_verdict(t.config, t.result);
  }
  if (!tool_error.empty()) throw std::runtime_error(tool_error);
}

}  // namespace kf
