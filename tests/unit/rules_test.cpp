#include "tune/rules.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/input_error.hpp"
#include "tune/objective.hpp"
#include "tune/strategy.hpp"

namespace kf {
namespace {

std::string WriteRules(const std::string& text) {
  static int n = 0;
  std::string path = std::filesystem::temp_directory_path() /
                     ("kf_rules_" + std::to_string(getpid()) + "_" + std::to_string(n++) + ".toml");
  std::ofstream(path) << text;
  return path;
}

SearchSpace Space() {
  return SearchSpace::FromConstraints({MakeParam("BLOCK", {"16", "32", "48", "64", "128", "256"}),
                                       MakeParam("VEC", {"1", "2", "4"})},
                                      {}, Env());
}

RuleContext Gpu(const std::string& vendor, const std::string& arch, double warp) {
  RuleContext c;
  c.op_class = "rope";
  c.vendor = vendor;
  c.arch = arch;
  c.device_class = "gpu";
  c.device.Set("sub_group_width", warp);
  c.device.Set("max_work_group_size", 1024);
  return c;
}

TEST(Rules, RestrictForbidOrderAndHint) {
  auto rules = LoadRuleFile(WriteRules(R"(
[[rule]]
name = "warps"
when = { device_class = "gpu", requires = ["BLOCK"] }
forbid = "BLOCK % sub_group_width != 0"
hint = "whole warps"

[[rule]]
name = "hopper"
when = { vendor = "NVIDIA", arch = "sm_9", op_class = ["rope"] }
restrict = { BLOCK = [64, 128, 256] }
order = { BLOCK = ["256", "128"] }
forbid = ["BLOCK * VEC > 512"]
)"));
  ASSERT_EQ(rules.size(), 2u);
  RuledSpace hopper = ApplyRules(rules, Gpu("NVIDIA", "sm_90", 32), Space());
  EXPECT_EQ(hopper.applied, (std::vector<std::string>{"warps", "hopper"}));
  EXPECT_EQ(hopper.hints, (std::vector<std::string>{"whole warps"}));
  // BLOCK in {64, 128, 256} (restrict, and multiples of 32), minus 256 x 4 (forbid): 3 * 3 - 1.
  EXPECT_EQ(hopper.space.size(), 8u);
  for (const Point& p : hopper.space.points()) {
    Config c = hopper.space.ToConfig(p);
    EXPECT_NE(c["BLOCK"], "16");
    EXPECT_FALSE(c["BLOCK"] == "256" && c["VEC"] == "4");
  }
  ASSERT_FALSE(hopper.try_first.empty());
  EXPECT_EQ(hopper.space.ToConfig(hopper.try_first[0])["BLOCK"], "256");

  RuledSpace ampere = ApplyRules(rules, Gpu("NVIDIA", "sm_80", 32), Space());  // only "warps"
  EXPECT_EQ(ampere.applied, (std::vector<std::string>{"warps"}));
  EXPECT_EQ(ampere.space.size(), 4u * 3u);  // 32, 64, 128, 256
  RuledSpace amd = ApplyRules(rules, Gpu("AMD", "gfx90a", 64), Space());
  EXPECT_EQ(amd.space.size(), 3u * 3u);  // 64, 128, 256
  RuleContext cpu = Gpu("Intel", "", 16);
  cpu.device_class = "cpu";
  EXPECT_TRUE(ApplyRules(rules, cpu, Space()).applied.empty());
}

TEST(Rules, RequiresAndLacksMatchTheSpacesParameters) {
  auto rules = LoadRuleFile(WriteRules(R"(
[[rule]]
name = "one-d"
when = { requires = ["BLOCK"], lacks = ["VEC"] }
forbid = "BLOCK < 64"
)"));
  EXPECT_TRUE(
      ApplyRules(rules, Gpu("NVIDIA", "sm_90", 32), Space()).applied.empty());  // the space has VEC
  SearchSpace one_d =
      SearchSpace::FromConstraints({MakeParam("BLOCK", {"16", "64", "128"})}, {}, Env());
  RuledSpace r = ApplyRules(rules, Gpu("NVIDIA", "sm_90", 32), one_d);
  EXPECT_EQ(r.space.size(), 2u);
}

TEST(Rules, RulesThatWouldLeaveNothingAreNotApplied) {
  auto rules = LoadRuleFile(WriteRules("[[rule]]\nname = \"none\"\nforbid = \"BLOCK > 0\"\n"));
  RuledSpace r = ApplyRules(rules, Gpu("NVIDIA", "sm_90", 32), Space());
  EXPECT_TRUE(r.applied.empty());
  EXPECT_EQ(r.space.size(), Space().size());
  EXPECT_FALSE(r.hints.empty());
}

TEST(Rules, OurRecordingsCarryTheirContextSoReplayAppliesTheSameRules) {
  auto bowl = ReplayObjective::Load(std::string(KF_TEST_DATA) + "/spaces/bowl.json");
  RuleContext live = Gpu("NVIDIA", "sm_90", 32);
  std::string path = std::filesystem::temp_directory_path() / "kf_context_recording.json";
  WriteKernelTunerCache(path, bowl->space(), bowl->records(), "bowl", "cuda:0 (NVIDIA H200)",
                        RuleContextToJson(live));
  auto again = ReplayObjective::Load(path);
  RuleContext replayed = RecordedSpaceContext(*again, path);
  EXPECT_EQ(replayed.op_class, "rope");
  EXPECT_EQ(replayed.arch, "sm_90");
  EXPECT_EQ(replayed.device_class, "gpu");
  EXPECT_EQ(replayed.device.Get("sub_group_width"), 32.0);
  // A cache file of Kernel Tuner's own has no context: the device name decides.
  RuleContext derived = RecordedSpaceContext(*bowl, "bowl.json");
  EXPECT_EQ(derived.device_class, "gpu");
  EXPECT_EQ(derived.op_class, "bowl");
}

TEST(Rules, MalformedFilesNameFileLineAndField) {
  auto error = [](const std::string& text) {
    try {
      LoadRuleFile(WriteRules(text));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error("[[rule]]\nname = \"x\"\nwhen = { colour = \"blue\" }\n")
                .find(":3: rule x.when.colour: unknown condition"),
            std::string::npos);
  EXPECT_NE(error("[[rule]]\nname = \"x\"\nforbid = \"BLOCK >\"\n").find(":3: rule x.forbid:"),
            std::string::npos);
  EXPECT_NE(error("[[rule]]\nname = \"x\"\nrestirct = {}\n").find("rule x.restirct: unknown field"),
            std::string::npos);
  EXPECT_NE(error("[[rule]]\nwhen = {}\n").find("rule.name: missing"), std::string::npos);
  EXPECT_NE(error("[[rule]\n").find("syntax"), std::string::npos);
}

TEST(Rules, TheShippedRuleSetsLoadAndKeepTheRecordedOptima) {
  std::vector<Rule> rules = LoadRules(std::string(KF_RULES));
  EXPECT_GE(rules.size(), 8u);
  std::vector<std::string> names;
  for (const Rule& r : rules) names.push_back(r.name);
  for (const char* expected :
       {"hopper-memory-bound-blocks", "xe-matmul-blocks", "cpu-groups-a-few-vectors-long"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  }
  std::string shared = KF_SHARED_SPACES;
  if (!std::filesystem::exists(shared))
    GTEST_SKIP() << "no shared/tuning-spaces here to check the optima on";
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(shared)) {
    std::string path = entry.path().string();
    if (path.size() < 8 || path.substr(path.size() - 8) != ".json.gz") continue;
    auto replay = ReplayObjective::Load(path);
    RuledSpace ruled = ApplyRules(rules, RecordedSpaceContext(*replay, path), replay->space());
    const Point* best = nullptr;
    for (const auto& [p, m] : replay->records()) {
      if (m.ok && (!best || m.time_ms < replay->records().at(*best).time_ms)) best = &p;
    }
    ASSERT_NE(best, nullptr);
    EXPECT_TRUE(ruled.space.IsValid(*best)) << path << ": the rules removed the optimum";
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

TEST(Rules, StartingPointsPutTheDefaultFirstAndTheRulesAdviceNearIt) {
  auto rules = LoadRuleFile(WriteRules(R"(
[[rule]]
name = "order"
when = { requires = ["BLOCK"] }
order = { BLOCK = ["128", "256"] }
)"));
  RuleContext c = Gpu("NVIDIA", "sm_90", 32);
  c.defaults = {{"BLOCK", "64"}, {"VEC", "4"}};
  RuledSpace ruled = ApplyRules(rules, c, Space());
  ASSERT_GE(ruled.try_first.size(), 2u);
  // The ordered values, with the rest of the configuration the template's default.
  EXPECT_EQ(ConfigToString(ruled.space.ToConfig(ruled.try_first[0])), "{BLOCK: 128, VEC: 4}");
  EXPECT_EQ(ConfigToString(ruled.space.ToConfig(ruled.try_first[1])), "{BLOCK: 256, VEC: 4}");
  std::vector<Point> start = StartingPoints(ruled.space, c.defaults, ruled.try_first, 8);
  ASSERT_EQ(start.size(), 3u);  // the default, then a quarter of the budget
  EXPECT_EQ(ConfigToString(ruled.space.ToConfig(start[0])), "{BLOCK: 64, VEC: 4}");
  EXPECT_EQ(start[1], ruled.try_first[0]);
  // A default the space excludes is skipped; no default, no rules: nothing to start from.
  EXPECT_EQ(StartingPoints(ruled.space, {{"BLOCK", "48"}, {"VEC", "9"}}, ruled.try_first, 8).size(),
            2u);
  EXPECT_TRUE(StartingPoints(Space(), {}, {}, 8).empty());
}

// Issue 4's criterion on a measured space: a quarter of the rope template's space, tuned with the
// default strategy and rules, finds the configuration exhaustive search found best. Replaying
// committed recordings (every configuration measured by `kfoundry tune --strategy exhaustive
// --record`) makes this exact and repeatable; every seed must find it.
void QuarterBudgetFindsTheOptimum(const std::string& path) {
  auto replay = ReplayObjective::Load(path);
  const Point* optimum = nullptr;
  for (const auto& [p, m] : replay->records()) {
    if (m.ok && (!optimum || m.time_ms < replay->records().at(*optimum).time_ms)) optimum = &p;
  }
  ASSERT_NE(optimum, nullptr);
  RuleContext context = RecordedSpaceContext(*replay, path);
  ASSERT_FALSE(context.defaults.empty()) << path << " carries the template's default";
  RuledSpace ruled = ApplyRules(LoadRules(KF_RULES), context, replay->space());
  const int budget = static_cast<int>(replay->space().size()) / 4;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    TuningSession session(ruled.space, {budget, 0}, MakeStrategy(kDefaultStrategy), seed);
    session.MeasureFirst(StartingPoints(ruled.space, context.defaults, ruled.try_first, budget));
    RunSession(session, *replay);
    ASSERT_NE(session.best(), nullptr);
    EXPECT_LE(session.evaluations(), budget);
    EXPECT_EQ(session.best()->point, *optimum) << "seed " << seed;
  }
}

// The H200 recording is flat (every configuration within 4%) and its best happens to be the
// template's default; it is here so the Hopper rules are replayed too.
TEST(Rules, AQuarterOfTheRecordedRopeSpaceFindsTheExhaustiveOptimum) {
  for (const char* file :
       {"rope_vec8_pocl_2026-12-02.json", "rope_vec8_h200_with_context_2026-12-02.json"}) {
    SCOPED_TRACE(file);
    QuarterBudgetFindsTheOptimum(std::string(KF_RECORDINGS) + "/" + file);
  }
}

}  // namespace
}  // namespace kf
