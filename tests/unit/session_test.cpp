// The ask/tell session: the budget and the cache with points in flight, results told in any order
// or never asked for, and every strategy driven one point at a time, in batches and out of order.
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

std::vector<Point> Points(const std::vector<TraceEntry>& trace) {
  std::vector<Point> out;
  for (const TraceEntry& e : trace) out.push_back(e.point);
  return out;
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

// Hands out the points it is given, in order, and keeps what it is told.
class ListStrategy : public TuningStrategy {
 public:
  ListStrategy(std::vector<Point> points, std::vector<Point>& told)
      : points_(std::move(points)), told_(told) {}
  std::vector<Point> Ask(TuningSession&, int n) override {
    std::vector<Point> out;
    while (next_ < points_.size() && static_cast<int>(out.size()) < n)
      out.push_back(points_[next_++]);
    return out;
  }
  void Tell(TuningSession&, const Point& p, const Measurement&) override { told_.push_back(p); }

 private:
  std::vector<Point> points_;
  size_t next_ = 0;
  std::vector<Point>& told_;
};

TEST(Session, AnInvalidPickIsRecordedAsAFailureChargedAndTold) {
  auto bowl = Recorded("bowl.json");
  const Point invalid = {99, 0, 0}, valid = bowl->space().points()[0];
  std::vector<Point> told;
  TuningSession s(bowl->space(), {5, 0},
                  std::make_unique<ListStrategy>(std::vector<Point>{invalid, valid}, told), 1);
  EXPECT_EQ(s.Ask(2), std::vector<Point>{valid});
  ASSERT_EQ(s.trace().size(), 1u);
  EXPECT_EQ(s.trace()[0].point, invalid);
  EXPECT_EQ(s.trace()[0].result.failure, "InvalidConfig");
  EXPECT_EQ(told, std::vector<Point>{invalid});
  EXPECT_EQ(s.remaining(), 3);
  EXPECT_FALSE(s.Done());  // `valid` is in flight
  s.Tell(valid, bowl->Measure(valid));
  EXPECT_TRUE(s.Ask(4).empty());  // the list is spent and nothing is in flight: finished
  EXPECT_TRUE(s.Done());
}

class AskTell : public ::testing::TestWithParam<std::string> {};

// Every strategy, on both test spaces, within the budget and past the whole space, asked for one
// point at a time and for four: nothing measured twice, the budget spent, and repeatable.
TEST_P(AskTell, BatchesOfOneAndFourKeepTheBudgetAndNeverRepeat) {
  for (const char* file : {"ridge.json.gz", "bowl.json"}) {
    auto replay = Recorded(file);
    const int size = static_cast<int>(replay->space().size());
    for (int budget : {60, 1000}) {
      for (int batch : {1, 4}) {
        SCOPED_TRACE(std::string(file) + ", budget " + std::to_string(budget) + ", batch " +
                     std::to_string(batch));
        auto run = [&](uint64_t seed) {
          DeviceObjective device(*replay);
          TuningSession s(replay->space(), {budget, 0}, MakeStrategy(GetParam()), seed);
          s.MeasureFirst({replay->space().points()[7]});
          RunSession(s, device, batch);
          ExpectSound(s, device, budget);
          EXPECT_EQ(s.evaluations(), std::min(budget, size));
          return Points(s.trace());
        };
        EXPECT_EQ(run(5), run(5)) << "not repeatable for a seed";
      }
    }
  }
}

TEST_P(AskTell, ResultsToldInReverseBreakNothing) {
  for (const char* file : {"ridge.json.gz", "bowl.json"}) {
    SCOPED_TRACE(file);
    auto replay = Recorded(file);
    DeviceObjective device(*replay);
    TuningSession s(replay->space(), {60, 0}, MakeStrategy(GetParam()), 9);
    s.MeasureFirst({replay->space().points()[1], replay->space().points()[2]});
    size_t largest = 0;
    for (int round = 0; round < 1000; ++round) {
      std::vector<Point> asked = s.Ask(4);
      if (asked.empty()) break;
      largest = std::max(largest, asked.size());
      for (auto p = asked.rbegin(); p != asked.rend(); ++p) s.Tell(*p, device.Measure(*p));
    }
    ExpectSound(s, device, 60);
    EXPECT_EQ(s.evaluations(), 60);
    EXPECT_LE(largest, 4u);
    // Only annealing waits for every result; the others fill a batch.
    if (GetParam() != "annealing") {
      EXPECT_EQ(largest, 4u);
    }
  }
}

// Four in flight at any time, the newest answering first: the strategy is asked while results
// it waits for are still out.
TEST_P(AskTell, ResultsArrivingWhileOthersAreInFlightBreakNothing) {
  auto ridge = Recorded("ridge.json.gz");
  DeviceObjective device(*ridge);
  TuningSession s(ridge->space(), {60, 0}, MakeStrategy(GetParam()), 10);
  std::vector<Point> in_flight;
  for (int step = 0; step < 10000; ++step) {
    for (Point& p : s.Ask(4 - static_cast<int>(in_flight.size()))) {
      EXPECT_EQ(std::count(in_flight.begin(), in_flight.end(), p), 0);
      in_flight.push_back(std::move(p));
    }
    if (in_flight.empty()) break;
    Point p = in_flight.back();
    in_flight.pop_back();
    s.Tell(p, device.Measure(p));
  }
  ExpectSound(s, device, 60);
  EXPECT_EQ(s.evaluations(), 60);
}

// A resumed run tells what its store holds before asking, and results may come in unasked while
// the run goes on: each is recorded, charged, and never handed out again.
TEST_P(AskTell, AResultNeverAskedForIsRecordedAndNeverAskedAgain) {
  auto ridge = Recorded("ridge.json.gz");
  const std::vector<Point>& all = ridge->space().points();
  std::vector<Point> stored = {all[0], all[100], all[500]};
  DeviceObjective device(*ridge);
  TuningSession s(ridge->space(), {60, 0}, MakeStrategy(GetParam()), 11);
  for (const Point& p : stored) s.Tell(p, ridge->Measure(p));
  EXPECT_EQ(s.evaluations(), 3);
  EXPECT_EQ(s.remaining(), 57);
  for (const Point& p : stored) {
    ASSERT_NE(s.Cached(p), nullptr);
    EXPECT_TRUE(s.Seen(p));
  }
  std::vector<Point> asked = s.Ask(2);
  ASSERT_FALSE(asked.empty());
  auto unseen = std::find_if(all.rbegin(), all.rend(), [&](const Point& p) { return !s.Seen(p); });
  ASSERT_NE(unseen, all.rend());
  stored.push_back(*unseen);
  s.Tell(*unseen, ridge->Measure(*unseen));  // arrives while `asked` are in flight
  for (const Point& p : asked) s.Tell(p, device.Measure(p));
  RunSession(s, device);
  ExpectSound(s, device, 60);
  EXPECT_EQ(s.evaluations(), 60);
  for (const Point& p : stored)
    EXPECT_EQ(std::count(device.measured.begin(), device.measured.end(), p), 0);
}

INSTANTIATE_TEST_SUITE_P(All, AskTell, ::testing::ValuesIn(StrategyNames()));

}  // namespace
}  // namespace kf
