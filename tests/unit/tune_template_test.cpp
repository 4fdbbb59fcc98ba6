// TuneTemplate: one template's tuning, ask/tell, as `kfoundry tune` and every proposal of the
// search use it: the default first, the budget kept, nothing asked twice, several configurations
// out at once, verdicts told in any order.
#include "tune/tune_template.hpp"

#include <gtest/gtest.h>

#include <set>

#include "core/input_error.hpp"
#include "core/task.hpp"

namespace kf {
namespace {

Kernel Vec8() {
  return LoadKernelFile(std::string(KF_TASKS) + "/rope_llama3/rope_vec8.cl");
}

TuneSettings Settings(int budget) {
  TuneSettings s;
  s.device_env.Set("max_work_group_size", 1024);
  for (const char* k : {"B", "S", "Hq", "Hkv", "D"}) s.device_env.Set(k, 64);
  s.budget = {budget, 0};
  s.seed = 3;
  return s;
}

Measurement Fake(const Config& c) {
  double ms = 1;
  for (const auto& [k, v] : c) ms += static_cast<double>(std::hash<std::string>{}(k + v) % 97);
  return {true, ms, ""};
}

TEST(TuneTemplate, AsksTheDefaultFirstKeepsItsBudgetAndNeverAsksTwice) {
  Kernel vec8 = Vec8();
  TuneTemplate t(vec8, Settings(6));
  std::vector<Config> first = t.Ask(1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0], vec8.ResolveConfig({}));
  t.Tell(first[0], Fake(first[0]));
  std::set<Config> seen = {first[0]};
  while (!t.Done()) {
    std::vector<Config> next = t.Ask(1);
    ASSERT_FALSE(next.empty()) << "not done, nothing pending, yet nothing to ask";
    EXPECT_TRUE(seen.insert(next[0]).second) << ConfigToString(next[0]) << " asked twice";
    t.Tell(next[0], Fake(next[0]));
  }
  EXPECT_EQ(seen.size(), 6u);
  EXPECT_EQ(t.evaluations(), 6);
  EXPECT_TRUE(t.Ask(4).empty());
}

// What won where the same parameters were tuned before (another kernel: a parent, a sibling) is
// measured first; a source with other parameters is left out.
TEST(TuneTemplate, ASourceWithTheSameParametersPutsItsBestFirst) {
  Kernel vec8 = Vec8();
  Kernel parent = vec8;
  parent.source += "// the parent\n";
  const Config won = {{"BLOCK", "256"}, {"HPT", "1"}};
  ASSERT_NE(won, vec8.ResolveConfig({}));
  TuneSettings s = Settings(4);
  TuneSource source{parent,
                    {{won, {true, 1.0, ""}},
                     {vec8.ResolveConfig({}), {true, 3.0, ""}},
                     {{{"BLOCK", "16"}, {"HPT", "8"}}, {false, 0, "incorrect"}}}};
  s.sources = {source};
  TuneTemplate t(vec8, s);
  ASSERT_NE(t.prior(), nullptr);
  std::vector<Config> first = t.Ask(2);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0], won);
  EXPECT_EQ(first[1], vec8.ResolveConfig({}));  // the default next

  Kernel other = LoadKernelFile(std::string(KF_TASKS) + "/rope_llama3/rope_vec4.cl");  // BLOCK only
  TuneSettings unrelated = Settings(4);
  unrelated.sources = {TuneSource{other, {{{{"BLOCK", "256"}}, {true, 1.0, ""}}}}};
  TuneTemplate u(vec8, unrelated);
  EXPECT_EQ(u.prior(), nullptr);
  EXPECT_EQ(u.Ask(1)[0], vec8.ResolveConfig({}));
}

TEST(TuneTemplate, SeveralOutAtOnceAndToldInAnyOrder) {
  TuneTemplate t(Vec8(), Settings(8));
  std::set<Config> seen;
  int rounds = 0;
  size_t widest = 0;
  while (!t.Done() && rounds++ < 50) {
    std::vector<Config> batch = t.Ask(4);
    widest = std::max(widest, batch.size());
    EXPECT_EQ(t.pending(), static_cast<int>(batch.size()));
    for (auto it = batch.rbegin(); it != batch.rend(); ++it) {  // told last first
      EXPECT_TRUE(seen.insert(*it).second);
      t.Tell(*it, Fake(*it));
    }
  }
  EXPECT_TRUE(t.Done());
  EXPECT_EQ(seen.size(), 8u);
  EXPECT_GE(widest, 2u) << "the start and the strategy's random points can go out together";
}

TEST(TuneTemplate, AKernelWithoutParametersIsOneConfiguration) {
  Kernel k = ParseKernel("k.cl",
                         "// @kernel f\n// @grid 1\n// @block 1\n"
                         "__kernel void f(__global float* x) {}\n");
  TuneTemplate t(k, Settings(4));
  EXPECT_EQ(t.space(), nullptr);
  std::vector<Config> only = t.Ask(3);
  ASSERT_EQ(only.size(), 1u);
  EXPECT_TRUE(only[0].empty());
  EXPECT_FALSE(t.Done());
  EXPECT_TRUE(t.Ask(1).empty());
  t.Tell(only[0], {false, 0, "compile_error"});
  EXPECT_TRUE(t.Done());
}

TEST(TuneTemplate, ASpaceTheConstraintsEmptyIsAnInputError) {
  Kernel k = ParseKernel("k.cl",
                         "// @kernel f\n// @grid 1\n// @block B\n// @param B in [64, 128]\n"
                         "// @constraint B > max_work_group_size\n"
                         "__kernel void f(__global float* x) {}\n");
  EXPECT_THROW(TuneTemplate(k, Settings(4)), InputError);
}

}  // namespace
}  // namespace kf
