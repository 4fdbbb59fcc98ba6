// The ask/tell session: the budget and the cache with points in flight, the seconds budget, and
// failures remembered.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <thread>

#include "tune/objective.hpp"
#include "tune/strategy.hpp"

namespace kf {
namespace {

std::unique_ptr<ReplayObjective> Recorded(const std::string& f) {
  return ReplayObjective::Load(std::string(KF_TEST_DATA) + "/spaces/" + f);
}

// Answers from a recorded space as a device would: taking `delay` over each point, failing the
// points listed in `failing`, and keeping every point it was asked to measure.
class DeviceObjective : public Objective {
 public:
  explicit DeviceObjective(Objective& inner,
                           std::chrono::milliseconds delay = std::chrono::milliseconds(0),
                           std::set<Point> failing = {})
      : inner_(inner), delay_(delay), failing_(std::move(failing)) {}
  Measurement Measure(const Point& p) override {
    measured.push_back(p);
    if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
    if (failing_.count(p)) return {false, 0, "RuntimeError"};
    return inner_.Measure(p);
  }
  std::vector<Point> measured;

 private:
  Objective& inner_;
  std::chrono::milliseconds delay_;
  std::set<Point> failing_;
};

// Nothing measured twice (by the device or in the trace), every measurement recorded, the
// budget kept, nothing left in flight.
void ExpectSound(const TuningSession& s, const DeviceObjective& device, int budget) {
  std::set<Point> traced;
  for (const TraceEntry& e : s.trace()) traced.insert(e.point);
  EXPECT_EQ(traced.size(), s.trace().size()) << "a point in the trace twice";
  std::set<Point> measured(device.measured.begin(), device.measured.end());
  EXPECT_EQ(measured.size(), device.measured.size()) << "a point measured twice";
  for (const Point& p : measured) EXPECT_TRUE(traced.count(p)) << "a measurement not recorded";
  EXPECT_LE(s.evaluations(), budget);
  EXPECT_EQ(s.pending(), 0);
  EXPECT_TRUE(s.Done());
}

TEST(Session, NeverHandsOutAPointTwiceAndChargesItWhenHandedOut) {
  auto bowl = Recorded("bowl.json");
  TuningSession s(bowl->space(), {10, 0}, nullptr, 1);
  const Point p = bowl->space().points()[3];
  s.MeasureFirst({p, p});
  EXPECT_EQ(s.Ask(5), std::vector<Point>{p});  // once, though given twice
  EXPECT_TRUE(s.Seen(p));
  EXPECT_EQ(s.Cached(p), nullptr);  // pending, not measured
  EXPECT_EQ(s.pending(), 1);
  EXPECT_EQ(s.remaining(), 9);
  EXPECT_FALSE(s.Done());
  s.Tell(p, bowl->Measure(p));
  s.Tell(p, {false, 0, "RuntimeError"});  // a second result for it is ignored
  EXPECT_EQ(s.evaluations(), 1);
  ASSERT_NE(s.Cached(p), nullptr);
  EXPECT_TRUE(s.Cached(p)->ok);
  // Without a strategy only the points given are measured, up to the budget.
  DeviceObjective device(*bowl);
  s.MeasureFirst(bowl->space().points());
  RunSession(s, device, 3);
  EXPECT_EQ(s.evaluations(), 10);
  ExpectSound(s, device, 10);
  EXPECT_TRUE(s.Ask(1).empty());
}

TEST(Session, StopsWhenTheSecondsAreSpent) {
  auto bowl = Recorded("bowl.json");
  DeviceObjective slow(*bowl, std::chrono::milliseconds(40));
  TuningSession s(bowl->space(), {1000, 0.2}, MakeStrategy("random"), 1);
  RunSession(s, slow);
  // 0.2 s at 40 ms or more per evaluation: the run stops after at most 5 (6 if the check lands
  // just before the deadline), long before the 1000 evaluations or the space run out.
  EXPECT_GE(s.evaluations(), 1);
  EXPECT_LE(s.evaluations(), 6);
  EXPECT_TRUE(s.Done());
}

TEST(Session, AFailureIsRememberedAndNeverRetried) {
  auto bowl = Recorded("bowl.json");
  const Point bad = bowl->space().points()[5];
  DeviceObjective failing(*bowl, std::chrono::milliseconds(0), {bad});
  TuningSession s(bowl->space(), {200, 0}, MakeStrategy("model"), 2);
  s.MeasureFirst({bad, bad});
  RunSession(s, failing);
  ASSERT_NE(s.Cached(bad), nullptr);
  EXPECT_EQ(s.Cached(bad)->failure, "RuntimeError");
  EXPECT_EQ(std::count(failing.measured.begin(), failing.measured.end(), bad), 1);
  EXPECT_EQ(s.evaluations(), 80);  // the whole space, each point once
  ExpectSound(s, failing, 200);
}

}  // namespace
}  // namespace kf
