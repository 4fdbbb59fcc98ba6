// The search: archive and parent selection, the source mutations, the built-in proposer, and the
// loop itself on a synthetic judge (deterministic for a seed; a killed run resumes from the store
// with nothing judged twice).
#include <gtest/gtest.h>
#include <unistd.h>
#include <xxhash.h>

#include <filesystem>
#include <set>

#include "core/task.hpp"
#include "propose/builtin/builtin_proposer.hpp"
#include "propose/builtin/mutations.hpp"
#include "search/archive.hpp"
#include "search/classifier.hpp"
#include "search/search_loop.hpp"
#include "store/store.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;

Elite MakeElite(Cell cell, double speedup) {
  Elite e;
  e.cell = std::move(cell);
  e.speedup = speedup;
  e.kernel_id = "k" + std::to_string(speedup);
  return e;
}

TEST(Archive, KeepsTheFastestPerCell) {
  Archive a;
  EXPECT_TRUE(a.Offer(MakeElite({0, 0, 0}, 1.0)));
  EXPECT_FALSE(a.Offer(MakeElite({0, 0, 0}, 0.5)));
  EXPECT_TRUE(a.Offer(MakeElite({0, 0, 0}, 2.0)));
  EXPECT_TRUE(a.Offer(MakeElite({1, 0, 0}, 1.5)));
  EXPECT_EQ(a.cells().size(), 2u);
  EXPECT_DOUBLE_EQ(a.cells().at({0, 0, 0}).speedup, 2.0);
  EXPECT_DOUBLE_EQ(a.Best()->speedup, 2.0);
}

TEST(Archive, SelectionModesWeighCellsAsDocumented) {
  Archive a;
  a.Offer(MakeElite({0, 0, 0}, 1.0));
  a.Offer(MakeElite({1, 0, 0}, 10.0));
  a.Offer(MakeElite({2, 0, 0}, 1.0));
  auto counts = [&](Selection how) {
    std::map<Cell, int> n;
    std::mt19937_64 rng(5);
    for (int i = 0; i < 3000; ++i) ++n[a.SelectParent(how, rng)->cell];
    return n;
  };
  const Cell c0 = {0, 0, 0}, c1 = {1, 0, 0}, c2 = {2, 0, 0};
  std::map<Cell, int> uniform = counts(Selection::kUniform);
  for (const auto& [cell, n] : uniform) EXPECT_NEAR(n, 1000, 150) << cell[0];
  std::map<Cell, int> fitness = counts(Selection::kFitness);  // 10 : 1 : 1
  EXPECT_GT(fitness[c1], 5 * fitness[c0]);
  // Curiosity: children of [2,0,0] kept improving the archive, children of [0,0,0] never did.
  for (int i = 0; i < 8; ++i) {
    a.RecordChild(c2, {2, 1, 0}, true, true);
    a.RecordChild(c0, c0, false, false);
  }
  std::map<Cell, int> curious = counts(Selection::kCuriosity);
  EXPECT_GT(curious[c2], 3 * curious[c0]);
  // Gradient: the move +1 along the algorithm dimension always beat its parent. From [2,0,0] and
  // [1,0,0] it leads to empty cells; from [0,0,0] only into [0,1,0], which a stronger elite holds,
  // so [0,0,0] is left with the move that never helped.
  a.Offer(MakeElite({0, 1, 0}, 20.0));
  std::map<Cell, int> gradient = counts(Selection::kGradient);
  EXPECT_GT(gradient[c2], 4 * gradient[c0]);
  EXPECT_GT(gradient[c1], 4 * gradient[c0]);

  std::mt19937_64 rng(1);
  const Elite* parent = &a.cells().at(c1);
  for (const Elite* e : a.Inspirations(parent, 5, rng)) EXPECT_NE(e->cell, parent->cell);
  EXPECT_EQ(a.Inspirations(parent, 1, rng).size(), 1u);
  EXPECT_EQ(a.Inspirations(nullptr, 9, rng).size(), 4u);
}

Task Rope() {
  return LoadTask(std::string(KF_TASKS) + "/rope_llama3");
}

std::optional<std::string> Apply(const std::string& mutation, const Kernel& k) {
  return MutationByName(mutation)->apply(k, Rope());
}

TEST(Mutations, EachRewritesTheSourceItNamesAndTheResultStillParses) {
  Task task = Rope();
  Kernel vec8 = LoadKernelFile(task.PathOf("rope_vec8.cl"));
  Kernel vec8_cuda = LoadKernelFile(task.PathOf("rope_vec8.cu"));  // has __launch_bounds__
  Kernel baseline_cuda = LoadKernelFile(task.PathOf("baseline.cu"));
  Kernel baseline = LoadKernelFile(task.PathOf("baseline.cl"));

  std::optional<std::string> unrolled = Apply("unroll", vec8);
  ASSERT_TRUE(unrolled);
  EXPECT_NE(unrolled->find("  #pragma unroll\n  for (int j = 0; j < HPT"), std::string::npos)
      << *unrolled;
  EXPECT_FALSE(Apply("unroll", ParseKernel("u.cl", *unrolled)));  // one loop, now unrolled
  EXPECT_FALSE(Apply("unroll", baseline));                        // no loop at all

  EXPECT_FALSE(Apply("launch_bounds", vec8_cuda));
  std::optional<std::string> bounds = Apply("launch_bounds", baseline_cuda);
  ASSERT_TRUE(bounds);
  EXPECT_NE(bounds->find("__global__ void __launch_bounds__(BLOCK)"), std::string::npos);
  std::optional<std::string> reqd = Apply("launch_bounds", vec8);
  ASSERT_TRUE(reqd);
  EXPECT_NE(reqd->find("reqd_work_group_size(BLOCK, 1, 1)"), std::string::npos);

  // rope_vec8 has restrict and const everywhere already; the baseline has neither.
  EXPECT_FALSE(Apply("restrict", vec8));
  EXPECT_FALSE(Apply("const", vec8));
  std::optional<std::string> restricted = Apply("restrict", baseline);
  ASSERT_TRUE(restricted);
  Kernel r = ParseKernel("r.cl", *restricted);
  EXPECT_EQ(r.arg_names, baseline.arg_names);
  EXPECT_NE(restricted->find("* restrict q_out"), std::string::npos) << *restricted;
  EXPECT_FALSE(Apply("const", baseline));  // its inputs are const already
  Kernel loose = ParseKernel(
      "loose.cl",
      "// @kernel f\n// @grid 1\n// @block 1\n"
      "__kernel void f(__global half* q, __global half* k, __global float* cos_t,\n"
      "                __global float* sin_t, __global half* q_out, __global half* k_out,\n"
      "                int B, int S, int Hq, int Hkv, int D) {}\n");
  std::optional<std::string> constant = Apply("const", loose);
  ASSERT_TRUE(constant);
  EXPECT_NE(constant->find("__global const half* q,"), std::string::npos) << *constant;
  EXPECT_NE(constant->find("__global const float* sin_t"), std::string::npos) << *constant;
  EXPECT_NE(constant->find("__global half* q_out"), std::string::npos) << "outputs stay writable";

  std::optional<std::string> wider = Apply("work_per_thread", vec8);  // HPT gets 16
  ASSERT_TRUE(wider);
  Kernel w = ParseKernel("w.cl", *wider);
  EXPECT_EQ(w.params[1].name, "HPT");
  EXPECT_EQ(w.params[1].values.back(), "16");
  EXPECT_EQ(w.ResolveConfig({}), vec8.ResolveConfig({})) << "defaults are kept";
  std::optional<std::string> blocks = Apply("block_size", vec8);  // BLOCK gets 8 and 512
  ASSERT_TRUE(blocks);
  Kernel b = ParseKernel("b.cl", *blocks);
  EXPECT_EQ(b.params[0].values.front(), "8");
  EXPECT_EQ(b.params[0].values.back(), "512");
  Kernel vec = ParseKernel("v.cl",
                           "// @kernel f\n// @grid N\n// @block 64\n"
                           "// @param VEC in [1, 2, 4] default 2\n"
                           "__kernel void f(__global float* x) {}\n");
  std::optional<std::string> widened = Apply("vector_width", vec);
  ASSERT_TRUE(widened);
  EXPECT_EQ(ParseKernel("v.cl", *widened).params[0].values,
            (std::vector<std::string>{"1", "2", "4", "8"}));
  EXPECT_FALSE(Apply("vector_width", vec8));  // no vector-width parameter
}

TEST(Kernel, WithDefaultsMakesAConfigurationTheFilesOwn) {
  Kernel vec8 = LoadKernelFile(Rope().PathOf("rope_vec8.cl"));
  Kernel best = ParseKernel("best.cl", WithDefaults(vec8, {{"BLOCK", "128"}, {"HPT", "8"}}));
  EXPECT_EQ(best.ResolveConfig({}), (Config{{"BLOCK", "128"}, {"HPT", "8"}}));
  EXPECT_EQ(best.params[0].values, vec8.params[0].values);
}

// A deterministic stand-in for the device: the verdict is a function of source and config.
class SyntheticJudge : public Judge {
 public:
  explicit SyntheticJudge(int fail_after = -1) : fail_after_(fail_after) {}
  Evaluation Evaluate(const Kernel& kernel, const Config& config) override {
    if (fail_after_ >= 0 && judged_ >= fail_after_) throw std::runtime_error("killed");
    ++judged_;
    std::string text = kernel.source + ConfigToString(config);
    uint64_t h = XXH3_64bits(text.data(), text.size());
    Evaluation ev;
    ev.config = config;
    if (h % 7 == 0) {
      ev.status = Status::kCompileError;
      return ev;
    }
    double ms = 1.0 + static_cast<double>(h % 1000) / 100.0;
    ev.time = TimingStats{ms, ms, ms, 10};
    ev.baseline_time = TimingStats{5, 5, 5, 10};
    ev.speedup = 5 / ms;
    ev.descriptor = descriptors_.Classify(kernel.language, kernel.source, "");
    return ev;
  }
  int judged() const { return judged_; }

 private:
  DescriptorSpace descriptors_ = DescriptorSpace::Load(KF_DESCRIPTORS);
  int fail_after_, judged_ = 0;
};

struct TempStore {
  std::string path = (fs::temp_directory_path() /
                      ("kf_search_" + std::to_string(getpid()) + "_" + std::to_string(n++) + ".db"))
                         .string();
  ~TempStore() {
    for (const char* ext : {"", "-wal", "-shm"}) fs::remove(path + ext);
  }
  static inline int n = 0;
};

SearchSettings Settings(const std::string& run, int budget) {
  SearchSettings s;
  s.run = run;
  s.device = "synthetic";
  s.budget = budget;
  s.tune_budget = 3;
  s.seed = 11;
  s.device_env.Set("max_work_group_size", 1024);
  for (const char* k : {"B", "S", "Hq", "Hkv", "D"}) s.device_env.Set(k, 64);
  return s;
}

std::vector<std::string> Sequence(const SearchResult& r) {
  std::vector<std::string> out;
  for (const SearchEvaluation& e : r.trace) out.push_back(e.kernel_id + ConfigToString(e.config));
  return out;
}

SearchResult Search(Store& store, Judge& judge, const SearchSettings& s) {
  BuiltinProposer proposer(DescriptorSpace::Load(KF_DESCRIPTORS));
  Task task = Rope();
  store.OpenRun({s.run, task.name, s.device, {}, ""});
  return RunSearch(task, Language::kOpenCL, proposer, judge, store, s);
}

TEST(SearchLoop, SpendsTheBudgetFillsCellsAndIsDeterministicForASeed) {
  TempStore a, b;
  SyntheticJudge ja, jb;
  SearchResult ra = Search(*OpenStore(a.path), ja, Settings("r", 40));
  SearchResult rb = Search(*OpenStore(b.path), jb, Settings("r", 40));
  EXPECT_EQ(ra.trace.size(), 40u);
  EXPECT_EQ(ra.judged_now, 40);
  EXPECT_EQ(Sequence(ra), Sequence(rb));
  EXPECT_EQ(ra.stop_reason, "budget spent");
  // The baseline first, then every OpenCL template, then mutations of elites.
  EXPECT_EQ(ra.proposals.front()["origin"], "baseline baseline.cl");
  EXPECT_EQ(ra.proposals[1]["origin"], "template rope_elem.cl");
  bool mutated = false;
  for (const auto& p : ra.proposals)
    mutated = mutated || p["origin"].get<std::string>().find(" of ") != std::string::npos;
  EXPECT_TRUE(mutated);
  EXPECT_GE(ra.archive.cells().size(), 5u);
  std::vector<std::string> seq = Sequence(ra);
  EXPECT_EQ(std::set<std::string>(seq.begin(), seq.end()).size(), seq.size()) << "no repeats";
  EXPECT_EQ(OpenStore(a.path)->RunEvaluations("r").size(), 40u);

  SearchSettings other = Settings("r", 40);
  other.seed = 12;
  TempStore c;
  SyntheticJudge jc;
  EXPECT_NE(Sequence(Search(*OpenStore(c.path), jc, other)), Sequence(ra));
}

TEST(SearchLoop, AKilledRunResumesWithNothingJudgedTwiceAndNothingLost) {
  TempStore whole, killed;
  SyntheticJudge judge;
  SearchResult uninterrupted = Search(*OpenStore(whole.path), judge, Settings("r", 30));

  SyntheticJudge dies(13);  // the 14th judgement never returns
  EXPECT_THROW(Search(*OpenStore(killed.path), dies, Settings("r", 30)), std::runtime_error);
  EXPECT_EQ(OpenStore(killed.path)->RunEvaluations("r").size(), 13u);
  SyntheticJudge again;
  SearchResult resumed = Search(*OpenStore(killed.path), again, Settings("r", 30));
  EXPECT_EQ(resumed.from_store, 13);
  EXPECT_EQ(resumed.judged_now, 17);
  EXPECT_EQ(again.judged(), 17);
  EXPECT_EQ(Sequence(resumed), Sequence(uninterrupted));
  std::vector<StoredEvaluation> stored = OpenStore(killed.path)->RunEvaluations("r");
  EXPECT_EQ(stored.size(), 30u);
  std::set<std::string> keys;
  for (const StoredEvaluation& s : stored) keys.insert(s.candidate_id);
  EXPECT_EQ(keys.size(), 30u);
  // A finished run resumed again judges nothing.
  SyntheticJudge idle;
  SearchResult replayed = Search(*OpenStore(killed.path), idle, Settings("r", 30));
  EXPECT_EQ(idle.judged(), 0);
  EXPECT_EQ(replayed.from_store, 30);
}

}  // namespace
}  // namespace kf
