// The search: archive and parent selection, the source mutations, the built-in proposer, and the
// loop itself on a synthetic judge (deterministic for a seed with one proposal in flight; many in
// flight on several devices keep the budget; a stopped run resumes from the store with nothing
// judged twice).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "core/task.hpp"
#include "host/fake_judge.hpp"
#include "propose/builtin/builtin_proposer.hpp"
#include "propose/builtin/mutations.hpp"
#include "search/archive.hpp"
#include "search/classifier.hpp"
#include "search/run_summary.hpp"
#include "search/search_loop.hpp"
#include "store/store.hpp"
#include "tune/space.hpp"

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
  EXPECT_EQ(r.launches.at(0).arg_names, baseline.launches.at(0).arg_names);
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

// A deterministic stand-in for the judge: the fake judge's verdicts (host/fake_judge.hpp). It
// answers at once, in order, or (shuffled) from its own thread in a random order, as several
// devices would; after `tool_error_after` verdicts it fails as a broken executor would.
class SyntheticJudge : public Judge {
 public:
  explicit SyntheticJudge(int runners = 1, bool shuffled = false, int tool_error_after = -1,
                          std::chrono::microseconds delay = std::chrono::microseconds(200))
      : runners_(runners), shuffled_(shuffled), tool_error_after_(tool_error_after), delay_(delay) {
    if (shuffled_) thread_ = std::thread([this] { Deliver(); });
  }
  ~SyntheticJudge() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  void Submit(Candidate c, Done done, int) override {
    JudgeResult r = Verdict(c);
    if (!shuffled_) {
      done(std::move(r));
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_.emplace_back(std::move(done), std::move(r));
      pending_kernels_.push_back(c.kernel.source);
      std::set<std::string> distinct(pending_kernels_.begin(), pending_kernels_.end());
      max_kernels_out_ = std::max(max_kernels_out_, static_cast<int>(distinct.size()));
    }
    wake_.notify_all();
  }
  int runner_count() const override { return runners_; }
  void CancelPending() override {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [done, r] : pending_) {
      if (!r.tool_error.empty() || r.cancelled) continue;
      r = JudgeResult{};
      r.cancelled = true;
      --judged_;
      ++cancelled_;
    }
  }
  int judged() const { return judged_; }
  int cancelled() const { return cancelled_; }
  // The most kernels (so proposals) among the candidates waiting at once.
  int max_kernels_out() const { return max_kernels_out_; }
  // Holds results back (up to 500 ms each) until candidates of two kernels have been out at once.
  void HoldUntilTwoKernelsOut() { hold_ = true; }

 private:
  JudgeResult Verdict(const Candidate& c) {
    std::lock_guard<std::mutex> lock(mutex_);
    JudgeResult r;
    if (tool_error_after_ >= 0 && judged_ >= tool_error_after_) {
      r.tool_error = "the executor cannot start again";
      return r;
    }
    ++judged_;
    return FakeVerdict(c, runners_);
  }
  void Deliver() {
    std::mt19937_64 rng(3);
    for (;;) {
      std::pair<Done, JudgeResult> next;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || !pending_.empty(); });
        if (stop_ && pending_.empty()) return;
        // Until candidates of two kernels have been out at once, hold results back a while, so
        // that a scheduler that does keep several proposals in flight shows it however slowly
        // this machine proposes; a serial one still shows one kernel out, after the wait.
        if (hold_ && !stop_ && max_kernels_out_ < 2)
          wake_.wait_for(lock, std::chrono::milliseconds(500),
                         [&] { return stop_ || max_kernels_out_ >= 2; });
        size_t i = std::uniform_int_distribution<size_t>(0, pending_.size() - 1)(rng);
        next = std::move(pending_[i]);
        pending_.erase(pending_.begin() + static_cast<long>(i));
        pending_kernels_.erase(pending_kernels_.begin() + static_cast<long>(i));
      }
      if (!next.second.cancelled) std::this_thread::sleep_for(delay_);
      next.first(std::move(next.second));
    }
  }

  int runners_;
  bool shuffled_;
  int tool_error_after_;
  std::chrono::microseconds delay_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::pair<Done, JudgeResult>> pending_;
  bool stop_ = false;
  std::atomic<bool> hold_{false};
  std::vector<std::string> pending_kernels_;  // the kernel of each pending_ entry
  int judged_ = 0, max_kernels_out_ = 0, cancelled_ = 0;
  std::thread thread_;
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

SearchSettings Settings(const std::string& run, int budget, int in_flight = 1) {
  SearchSettings s;
  s.run = run;
  s.devices = "synthetic";
  s.device.backend = "opencl";
  s.policy.budget = budget;
  s.policy.tune_budget = 3;
  s.policy.in_flight = in_flight;
  s.policy.seed = 11;
  s.device_env.Set("max_work_group_size", 1024);
  for (const char* k : {"B", "S", "Hq", "Hkv", "D"}) s.device_env.Set(k, 64);
  return s;
}

// The run's evaluations in the store's order: what was judged, and in which order.
std::vector<std::string> Sequence(Store& store, const std::string& run) {
  std::vector<std::string> out;
  for (const StoredEvaluation& e : store.RunEvaluations(run))
    out.push_back(e.kernel_id + ConfigToString(e.config));
  return out;
}

SearchResult Search(Store& store, Judge& judge, const SearchSettings& s) {
  Task task = Rope();
  DescriptorSpace descriptors = DescriptorSpace::Load(KF_DESCRIPTORS);
  BuiltinProposer proposer(task, Language::kOpenCL, [&](const Kernel& k) {
    return descriptors.Classify(k.language, k.source, "");
  });
  store.OpenRun({s.run, task.name, s.devices, {}, ""});
  return RunSearch(task, proposer, judge, store, descriptors, s);
}

TEST(SearchLoop, SpendsTheBudgetFillsCellsAndIsDeterministicForASeed) {
  TempStore a, b;
  SyntheticJudge ja, jb;
  auto sa = OpenStore(a.path), sb = OpenStore(b.path);
  SearchResult ra = Search(*sa, ja, Settings("r", 40));
  SearchResult rb = Search(*sb, jb, Settings("r", 40));
  EXPECT_EQ(ra.evaluations, 40);
  EXPECT_EQ(ra.judged_now, 40);
  EXPECT_EQ(Sequence(*sa, "r"), Sequence(*sb, "r"));
  EXPECT_EQ(ra.stop_reason, "budget spent");
  // The baseline first, then every OpenCL template, then mutations of elites.
  std::vector<ProposalRecord> proposals = sa->RunProposals("r");
  ASSERT_GE(proposals.size(), 3u);
  EXPECT_EQ(proposals[0].proposal->origin, "baseline baseline.cl");
  EXPECT_EQ(proposals[1].proposal->origin, "template rope_elem.cl");
  bool mutated = false;
  for (const ProposalRecord& p : proposals)
    mutated = mutated || (p.proposal && p.proposal->origin.find(" of ") != std::string::npos);
  EXPECT_TRUE(mutated);
  EXPECT_GE(ra.archive.cells().size(), 5u);
  std::vector<std::string> seq = Sequence(*sa, "r");
  EXPECT_EQ(seq.size(), 40u);
  EXPECT_EQ(std::set<std::string>(seq.begin(), seq.end()).size(), seq.size()) << "no repeats";
  // What the store says is what the search held: the archive rebuilt from it is the same.
  RunSummary summary = ReadRunSummary(*sa, "r");
  ASSERT_EQ(summary.archive.cells().size(), ra.archive.cells().size());
  for (const auto& [cell, e] : ra.archive.cells()) {
    EXPECT_EQ(summary.archive.cells().at(cell).kernel_id, e.kernel_id);
    EXPECT_DOUBLE_EQ(summary.archive.cells().at(cell).speedup, e.speedup);
  }

  SearchSettings other = Settings("r", 40);
  other.policy.seed = 12;
  TempStore c;
  SyntheticJudge jc;
  auto sc = OpenStore(c.path);
  Search(*sc, jc, other);
  EXPECT_NE(Sequence(*sc, "r"), Sequence(*sa, "r"));
}

TEST(SearchLoop, ManyProposalsInFlightOnSeveralDevicesKeepTheBudgetExactlyAndNeverRepeat) {
  TempStore a;
  SyntheticJudge judge(3, true, -1, std::chrono::milliseconds(1));
  judge.HoldUntilTwoKernelsOut();
  auto store = OpenStore(a.path);
  SearchResult r = Search(*store, judge, Settings("r", 60, 8));
  EXPECT_EQ(r.evaluations, 60);
  EXPECT_EQ(judge.judged(), 60);
  EXPECT_GE(judge.max_kernels_out(), 2) << "candidates of several proposals should be out at once";
  std::vector<std::string> seq = Sequence(*store, "r");
  EXPECT_EQ(seq.size(), 60u);
  EXPECT_EQ(std::set<std::string>(seq.begin(), seq.end()).size(), seq.size()) << "no repeats";
  std::set<std::string> devices;
  for (const StoredEvaluation& e : store->RunEvaluations("r")) devices.insert(e.evaluation.device);
  EXPECT_EQ(devices.size(), 3u);
  for (const ProposalRecord& p : store->RunProposals("r")) {
    EXPECT_TRUE(p.state == ProposalState::kDone || p.state == ProposalState::kNothingNew ||
                p.state == ProposalState::kAbandoned)
        << "proposal " << p.index << " left " << ProposalStateName(p.state);
  }
}

TEST(SearchLoop, AStoppedRunResumesWithNothingJudgedTwiceAndNothingLost) {
  TempStore whole, killed;
  SyntheticJudge judge;
  auto full = OpenStore(whole.path);
  Search(*full, judge, Settings("r", 30));

  SyntheticJudge dies(1, false, 13);  // the 14th judgement fails, as a dead executor would
  EXPECT_THROW(Search(*OpenStore(killed.path), dies, Settings("r", 30)), std::runtime_error);
  EXPECT_EQ(OpenStore(killed.path)->RunEvaluations("r").size(), 13u);
  SyntheticJudge again;
  auto resumed_store = OpenStore(killed.path);
  SearchResult resumed = Search(*resumed_store, again, Settings("r", 30));
  EXPECT_EQ(resumed.judged_now, 17);
  EXPECT_EQ(again.judged(), 17);
  EXPECT_EQ(resumed.evaluations, 30);
  // One proposal in flight: the resumed run goes on exactly where the stopped one left off.
  EXPECT_EQ(Sequence(*resumed_store, "r"), Sequence(*full, "r"));
  std::vector<StoredEvaluation> stored = resumed_store->RunEvaluations("r");
  std::set<std::string> keys;
  for (const StoredEvaluation& s : stored) keys.insert(s.candidate_id);
  EXPECT_EQ(keys.size(), 30u);
  // A finished run resumed again judges nothing.
  SyntheticJudge idle;
  Search(*OpenStore(killed.path), idle, Settings("r", 30));
  EXPECT_EQ(idle.judged(), 0);
}

TEST(SearchLoop, AStoppedRunWithManyInFlightResumesWithNothingJudgedTwice) {
  TempStore killed;
  SyntheticJudge dies(2, true, 21);
  EXPECT_THROW(Search(*OpenStore(killed.path), dies, Settings("r", 50, 8)), std::runtime_error);
  size_t before = OpenStore(killed.path)->RunEvaluations("r").size();
  // What was judged is stored; what was waiting when the tool failed was dropped.
  EXPECT_EQ(before, static_cast<size_t>(dies.judged()));
  EXPECT_GE(before, 10u);
  SyntheticJudge again(2, true);
  auto store = OpenStore(killed.path);
  SearchResult resumed = Search(*store, again, Settings("r", 50, 8));
  EXPECT_EQ(resumed.evaluations, 50);
  EXPECT_EQ(again.judged(), 50 - static_cast<int>(before));
  std::set<std::string> candidates;
  for (const StoredEvaluation& s : store->RunEvaluations("r")) candidates.insert(s.candidate_id);
  EXPECT_EQ(candidates.size(), 50u) << "a candidate was judged twice";
  std::set<int> indices;
  for (const ProposalRecord& p : store->RunProposals("r")) indices.insert(p.index);
  EXPECT_EQ(static_cast<int>(indices.size()), resumed.proposals) << "a proposal was lost";
}

TEST(SearchLoop, ATimeBudgetDropsTheQueueInsteadOfWaitingForIt) {
  TempStore a;
  // 8 candidates out, delivered one at a time, each 250 ms: when the time is up about 6 are
  // still queued, which would take 1.5 s more to wait for.
  const double each = 0.25;
  SyntheticJudge judge(3, true, -1, std::chrono::milliseconds(250));
  auto store = OpenStore(a.path);
  SearchSettings s = Settings("r", 1000, 8);
  s.policy.seconds = 0.5;
  SearchResult r = Search(*store, judge, s);
  EXPECT_EQ(r.stop_reason, "time budget spent");
  // One candidate may be running when the time is up; the queue behind it is dropped. The bound
  // leaves a loaded (or sanitized) machine 2 delays of slack and still fails a loop that waits.
  EXPECT_LT(r.seconds, s.policy.seconds + 3 * each);
  EXPECT_GT(judge.cancelled(), 0);
  EXPECT_EQ(r.evaluations, judge.judged()) << "a dropped candidate is not charged";
  EXPECT_EQ(store->RunEvaluations("r").size(), static_cast<size_t>(judge.judged()));
}

// A proposer with one template and nothing after it: the search must spend the rest itself.
// Gives the proposals, one per request without a parent, then nothing.
class ListProposer : public Proposer {
 public:
  explicit ListProposer(std::vector<Proposal> list) : list_(std::move(list)) {}
  std::string name() const override { return "list"; }
  ProposalOutcome Propose(const ProposalRequest& r) override {
    if (r.parent || given_ == list_.size()) return ProposalOutcome::NothingNew("nothing more");
    return ProposalOutcome::Ok(list_[given_++]);
  }
  int UnparentedLeft() const override { return static_cast<int>(list_.size() - given_); }

 private:
  std::vector<Proposal> list_;
  size_t given_ = 0;
};

Proposal RopeTemplate(const std::string& file) {
  Proposal p;
  p.kernel = LoadKernelFile(Rope().PathOf(file));
  p.origin = "template " + file;
  return p;
}

SearchResult SearchList(Store& store, Judge& judge, const SearchSettings& s,
                        std::vector<Proposal> list) {
  Task task = Rope();
  DescriptorSpace descriptors = DescriptorSpace::Load(KF_DESCRIPTORS);
  ListProposer proposer(std::move(list));
  store.OpenRun({s.run, task.name, s.devices, {}, ""});
  return RunSearch(task, proposer, judge, store, descriptors, s);
}

SearchResult SearchOneTemplate(Store& store, Judge& judge, const SearchSettings& s) {
  return SearchList(store, judge, s, {RopeTemplate("rope_vec8.cl")});
}

int DeepeningProposals(Store& store, const std::string& run) {
  int n = 0;
  for (const ProposalRecord& p : store.RunProposals(run))
    n +=
        p.request.value("by", "") == "deepen" && p.Final() && p.outcome.value("evaluations", 0) > 0;
  return n;
}

// The proposer runs dry after one template: the budget goes to deeper tuning of the elites,
// each round starting where the kernel's tuning left off (nothing asked twice: a fresh run
// answers nothing from the store).
TEST(SearchLoop, AProposerThatRunsDryLeavesItsBudgetToDeeperTuningOfTheElites) {
  TempStore a, b;
  SyntheticJudge ja, jb;
  auto sa = OpenStore(a.path), sb = OpenStore(b.path);
  SearchResult r = SearchOneTemplate(*sa, ja, Settings("r", 15));
  EXPECT_EQ(r.stop_reason, "budget spent");
  EXPECT_EQ(r.evaluations, 15);
  EXPECT_EQ(r.judged_now, 15);
  EXPECT_EQ(r.from_store, 0) << "a deeper tuning asked for a configuration judged before";
  std::vector<std::string> seq = Sequence(*sa, "r");
  EXPECT_EQ(std::set<std::string>(seq.begin(), seq.end()).size(), seq.size()) << "no repeats";
  EXPECT_GE(DeepeningProposals(*sa, "r"), 2);
  // The deepening is the search's own: deterministic for a seed.
  SearchOneTemplate(*sb, jb, Settings("r", 15));
  EXPECT_EQ(Sequence(*sb, "r"), seq);
}

// With budget to spare, every configuration of every correct kernel's space is judged once
// (elites first, then the kernels that lost their cell: one may have lost it to noise), and the
// run then says that nothing is left.
// The synthetic verdicts, but every kernel other than `favoured` ten times slower: in the
// favoured kernel's cell, no other kernel ever becomes the elite.
class FavouringJudge : public Judge {
 public:
  // `tool_error_after`: verdicts given before every later one is a tool error (a killed run).
  explicit FavouringJudge(std::string favoured, int tool_error_after = -1)
      : favoured_(std::move(favoured)), tool_error_after_(tool_error_after) {}
  void Submit(Candidate c, Done done, int) override {
    if (tool_error_after_ >= 0 && judged_ >= tool_error_after_) {
      JudgeResult dead;
      dead.tool_error = "the executor cannot start again";
      done(std::move(dead));
      return;
    }
    ++judged_;
    JudgeResult r = FakeVerdict(c);
    Evaluation& ev = r.evaluation;
    if (ev.status == Status::kOk && c.kernel.source != favoured_) {
      ev.time->median_ms *= 10;
      *ev.speedup /= 10;
    }
    done(std::move(r));
  }
  int runner_count() const override { return 1; }
  int judged() const { return judged_; }

 private:
  std::string favoured_;
  int tool_error_after_, judged_ = 0;
};

// rope_vec8 and a copy of it (a comment apart) that falls into its cell ten times slower under a
// FavouringJudge of rope_vec8: the copy never holds a cell.
std::vector<Proposal> Vec8AndASlowerCopy() {
  Proposal copy = RopeTemplate("rope_vec8.cl");
  copy.kernel.source += "// a copy\n";
  copy.origin = "a copy of rope_vec8.cl";
  return {RopeTemplate("rope_vec8.cl"), copy};
}
std::string Vec8() {
  return LoadKernelFile(Rope().PathOf("rope_vec8.cl")).source;
}

TEST(SearchLoop, ARunStopsEarlyOnlyWhenEveryCorrectKernelsSpaceIsTunedThrough) {
  TempStore a;
  FavouringJudge judge(Vec8());
  auto store = OpenStore(a.path);
  SearchSettings s = Settings("r", 4000);
  std::vector<Proposal> list = Vec8AndASlowerCopy();
  list.push_back(RopeTemplate("rope_vec4.cl"));
  SearchResult r = SearchList(*store, judge, s, list);
  EXPECT_EQ(r.stop_reason.rfind("nothing left to try: ", 0), 0u) << r.stop_reason;
  std::map<std::string, std::set<std::string>> judged;  // kernel id -> configurations
  std::map<std::string, Kernel> correct;                // kernels with an ok configuration
  for (const StoredEvaluation& e : store->RunEvaluations("r")) {
    EXPECT_TRUE(judged[e.kernel_id].insert(ConfigToString(e.config)).second)
        << ConfigToString(e.config) << " judged twice";
    if (e.evaluation.status == Status::kOk)
      correct.emplace(e.kernel_id, *store->FindKernel(e.kernel_id));
  }
  std::set<std::string> elites;
  for (const auto& [cell, e] : r.archive.cells()) elites.insert(e.kernel_id);
  int beaten = 0;  // correct kernels with a space that hold no cell
  for (const auto& [id, kernel] : correct) {
    if (kernel.params.empty()) continue;
    beaten += !elites.count(id);
    size_t space = SearchSpace::FromKernel(kernel, s.device_env).size();
    EXPECT_EQ(judged[id].size(), space)
        << id << (elites.count(id) ? " (an elite)" : "") << " was not tuned through";
  }
  EXPECT_GE(beaten, 1) << "the test needs a kernel that lost its cell";
  EXPECT_LT(r.evaluations, 4000);
}

// A run killed in the middle of a deeper tuning resumes it: nothing judged twice, and with one
// proposal in flight the same sequence as a run never killed.
TEST(SearchLoop, AStoppedRunResumesItsDeeperTuning) {
  TempStore whole, killed;
  SyntheticJudge judge;
  auto full = OpenStore(whole.path);
  SearchOneTemplate(*full, judge, Settings("r", 15));
  SyntheticJudge dies(1, false, 10);  // past the template's tuning, inside a deeper round
  EXPECT_THROW(SearchOneTemplate(*OpenStore(killed.path), dies, Settings("r", 15)),
               std::runtime_error);
  SyntheticJudge again;
  auto store = OpenStore(killed.path);
  SearchResult resumed = SearchOneTemplate(*store, again, Settings("r", 15));
  EXPECT_EQ(resumed.evaluations, 15);
  EXPECT_EQ(again.judged(), 5);
  EXPECT_EQ(Sequence(*store, "r"), Sequence(*full, "r"));
}

// Killed while tuning a kernel that holds no cell (the elite's space spent), a run resumes it
// from the store: nothing judged twice, the same sequence as a run never killed.
TEST(SearchLoop, AStoppedRunResumesTheDeeperTuningOfAKernelThatHoldsNoCell) {
  TempStore whole, killed;
  FavouringJudge judge(Vec8());
  auto full = OpenStore(whole.path);
  SearchList(*full, judge, Settings("r", 40), Vec8AndASlowerCopy());
  const std::string copy_id = KernelId(Vec8AndASlowerCopy()[1].kernel);
  int copy_deepened_before_35 = 0;  // the precondition: evaluation 35 is in the copy's deepening
  std::vector<StoredEvaluation> stored = full->RunEvaluations("r");
  std::set<int> deepening;
  for (const ProposalRecord& p : full->RunProposals("r"))
    if (p.request.value("by", "") == "deepen") deepening.insert(p.index);
  for (size_t i = 0; i < stored.size() && i < 36; ++i)
    copy_deepened_before_35 +=
        stored[i].kernel_id == copy_id && deepening.count(stored[i].proposal);
  ASSERT_GE(copy_deepened_before_35, 1) << "evaluation 35 should be in the copy's deeper tuning";
  FavouringJudge dies(Vec8(), 35);
  EXPECT_THROW(SearchList(*OpenStore(killed.path), dies, Settings("r", 40), Vec8AndASlowerCopy()),
               std::runtime_error);
  FavouringJudge again(Vec8());
  auto store = OpenStore(killed.path);
  SearchResult resumed = SearchList(*store, again, Settings("r", 40), Vec8AndASlowerCopy());
  EXPECT_EQ(resumed.evaluations, 40);
  EXPECT_EQ(again.judged(), 5);
  EXPECT_EQ(Sequence(*store, "r"), Sequence(*full, "r"));
}

// A time budget with a proposer that has run dry is spent judging, not ended early.
TEST(SearchLoop, ATimeBudgetWithADryProposerKeepsJudgingUntilItIsSpent) {
  TempStore a;
  SyntheticJudge judge(1, true, -1, std::chrono::milliseconds(60));
  auto store = OpenStore(a.path);
  SearchSettings s = Settings("r", 100000);
  s.policy.seconds = 1.0;
  SearchResult r = SearchOneTemplate(*store, judge, s);
  EXPECT_EQ(r.stop_reason, "time budget spent");
  EXPECT_GE(r.seconds, s.policy.seconds);
  EXPECT_GE(DeepeningProposals(*store, "r"), 1);
}

TEST(SearchLoop, ProposalSeedsAreDistinctStreams) {
  std::set<uint64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    seen.insert(ProposalSeed(1, i));
    seen.insert(ProposalSeed(1, i, 1));
  }
  EXPECT_EQ(seen.size(), 2000u);
  EXPECT_NE(ProposalSeed(1, 0), ProposalSeed(2, 0));
}

}  // namespace
}  // namespace kf
