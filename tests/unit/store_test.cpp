#include "store/store.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "core/input_error.hpp"
#include "store/sqlite/sqlite_store.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;

Kernel SomeKernel(const std::string& body = "x[0] = 1;") {
  return ParseKernel("k.cl",
                     "// @kernel k\n// @grid 1\n// @block 1\n// @param B in [1, 2]\n__kernel void "
                     "k(__global float* x) { " +
                         body + " }\n");
}

Evaluation Verdict(Status s, double ms) {
  Evaluation ev;
  ev.status = s;
  ev.reason = s == Status::kOk ? "" : "because";
  if (ms > 0) ev.time = TimingStats{ms, ms * 0.9, ms * 1.2, 10};
  ev.descriptor = {1, 0, 2};
  return ev;
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::temp_directory_path() / ("kf_store_" + std::to_string(getpid()) + ".db")).string();
    Clean();
  }
  void TearDown() override { Clean(); }
  void Clean() {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path_ + suffix);
  }
  std::string path_;
};

TEST_F(StoreTest, CreatesTheSchemaAndReopensIt) {
  {
    auto store = OpenStore("sqlite:" + path_);
    EXPECT_EQ(store->schema_version(), SqliteSchemaVersion());
    store->OpenRun({"r1", "rope_llama3", "cuda:0", {{"budget", 10}}, ""});
  }
  auto again = OpenStore(path_);  // a bare path works too
  ASSERT_TRUE(again->FindRun("r1"));
  EXPECT_EQ(again->FindRun("r1")->settings["budget"], 10);
  EXPECT_FALSE(again->FindRun("r2"));
}

TEST_F(StoreTest, RefusesASchemaNewerThanItKnows) {
  OpenStore(path_)->OpenRun({"r", "t", "d", {}, ""});
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "INSERT INTO schema_version VALUES (999)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  try {
    OpenStore(path_);
    FAIL() << "a newer schema was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("newer than this kfoundry knows"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(OpenStore("postgresql://localhost/kf"), InputError);
}

TEST_F(StoreTest, EvaluationsAreWrittenOnceAndKeepTheirOrder) {
  auto store = OpenStore(path_);
  store->OpenRun({"run", "rope_llama3", "opencl:0", {}, ""});
  Kernel k = SomeKernel();
  std::string cand = CandidateId(KernelId(k), {{"B", "1"}});
  std::string key = EvaluationKey(cand, "opencl:0", {{"sizes", "cpu"}});
  EXPECT_TRUE(store->PutEvaluation("run", k, {{"B", "1"}}, key, Verdict(Status::kOk, 0.5)));
  EXPECT_FALSE(
      store->PutEvaluation("run", k, {{"B", "1"}}, key, Verdict(Status::kOk, 0.7)));  // redelivered
  std::string key2 =
      EvaluationKey(CandidateId(KernelId(k), {{"B", "2"}}), "opencl:0", {{"sizes", "cpu"}});
  EXPECT_TRUE(store->PutEvaluation("run", k, {{"B", "2"}}, key2, Verdict(Status::kIncorrect, 0)));
  EXPECT_NE(key, EvaluationKey(cand, "opencl:0",
                               {{"sizes", "record"}}));  // other settings, other verdict

  std::vector<StoredEvaluation> all = store->RunEvaluations("run");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].seq, 1);
  EXPECT_EQ(all[1].seq, 2);
  EXPECT_EQ(all[0].config.at("B"), "1");
  EXPECT_DOUBLE_EQ(all[0].evaluation.time->median_ms, 0.5);  // the first write stands
  EXPECT_EQ(all[1].evaluation.status, Status::kIncorrect);
  EXPECT_EQ(all[1].evaluation.reason, "because");
  std::optional<Evaluation> found = store->FindEvaluation(key);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->descriptor, (std::vector<int>{1, 0, 2}));
  EXPECT_FALSE(store->PutKernel(k));  // already stored with its evaluation
  EXPECT_TRUE(store->PutKernel(SomeKernel("x[0] = 2;")));
}

TEST_F(StoreTest, RunsResumeByNameButNotForAnotherTask) {
  auto store = OpenStore(path_);
  RunInfo first = store->OpenRun({"run", "rope_llama3", "cuda:0", {}, ""});
  RunInfo again = store->OpenRun({"run", "rope_llama3", "cuda:0", {}, ""});
  EXPECT_EQ(first.created_at, again.created_at);
  EXPECT_THROW(store->OpenRun({"run", "gemm", "cuda:0", {}, ""}), InputError);
}

TEST_F(StoreTest, TheArchiveKeepsTheBestPerCell) {
  auto store = OpenStore(path_);
  store->OpenRun({"run", "t", "d", {}, ""});
  Kernel k = SomeKernel();
  for (const char* b : {"1", "2"}) {
    std::string c = CandidateId(KernelId(k), {{"B", b}});
    store->PutEvaluation("run", k, {{"B", b}}, EvaluationKey(c, "d", {}), Verdict(Status::kOk, 1));
  }
  std::string c1 = CandidateId(KernelId(k), {{"B", "1"}}),
              c2 = CandidateId(KernelId(k), {{"B", "2"}});
  EXPECT_TRUE(store->OfferArchiveCell("run", {{1, 0, 0}, c1, 2.0}));
  EXPECT_FALSE(store->OfferArchiveCell("run", {{1, 0, 0}, c2, 1.5}));
  EXPECT_TRUE(store->OfferArchiveCell("run", {{1, 0, 0}, c2, 3.0}));
  EXPECT_TRUE(store->OfferArchiveCell("run", {{0, 0, 0}, c1, 1.0}));
  std::vector<ArchiveEntry> archive = store->Archive("run");
  ASSERT_EQ(archive.size(), 2u);
  EXPECT_EQ(archive[1].cell, (std::vector<int>{1, 0, 0}));
  EXPECT_EQ(archive[1].candidate_id, c2);
  EXPECT_DOUBLE_EQ(archive[1].speedup, 3.0);
  store->AddEvent("run", "restart", {{"why", "SIGSEGV"}});
  ASSERT_EQ(store->Events("run").size(), 1u);
  EXPECT_EQ(store->Events("run")[0]["data"]["why"], "SIGSEGV");
}

TEST_F(StoreTest, ProposalsAreKeptAsTheyMoveOnAndFinishInOrder) {
  auto store = OpenStore(path_);
  store->OpenRun({"run", "t", "d", {}, ""});
  ProposalRecord a;
  a.index = 0;
  a.state = ProposalState::kIssued;
  a.request = {{"seed", 5}, {"parent", nullptr}};
  store->PutProposal("run", a);
  ProposalRecord b;
  b.index = 1;
  b.state = ProposalState::kIssued;
  store->PutProposal("run", b);
  Proposal p;
  p.kernel = SomeKernel("x[0] = 3;");
  p.kernel.path = "dir/mutant.cl";
  p.origin = "unroll of k.cl";
  p.mutations = {"unroll"};
  p.parent_cell = Cell{0, 0, 0};
  b.state = ProposalState::kProposed;
  b.proposal = p;
  store->PutProposal("run", b);
  b.state = ProposalState::kDone;
  b.outcome = {{"evaluations", 3}};
  store->PutProposal("run", b);
  store->PutProposal("run", b);  // written again: it keeps its place in the order
  a.state = ProposalState::kNothingNew;
  store->PutProposal("run", a);
  std::vector<ProposalRecord> all = store->RunProposals("run");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].state, ProposalState::kNothingNew);
  EXPECT_EQ(all[0].request["seed"], 5);
  EXPECT_FALSE(all[0].proposal);
  EXPECT_EQ(all[0].done_seq, 2);
  EXPECT_EQ(all[1].state, ProposalState::kDone);
  EXPECT_EQ(all[1].done_seq, 1);
  EXPECT_EQ(all[1].outcome["evaluations"], 3);
  ASSERT_TRUE(all[1].proposal);
  EXPECT_EQ(all[1].proposal->kernel.source, p.kernel.source);
  EXPECT_EQ(all[1].proposal->kernel.path, "dir/mutant.cl");
  EXPECT_EQ(all[1].proposal->origin, p.origin);
  EXPECT_EQ(all[1].proposal->parent_cell, p.parent_cell);
  std::optional<Kernel> k = store->FindKernel(KernelId(p.kernel));
  ASSERT_TRUE(k);
  EXPECT_EQ(k->source, p.kernel.source);
  EXPECT_FALSE(store->FindKernel("k0"));

  Kernel e = SomeKernel();
  std::string key = EvaluationKey(CandidateId(KernelId(e), {{"B", "1"}}), "d", {});
  store->PutEvaluation("run", e, {{"B", "1"}}, key, Verdict(Status::kOk, 1), {1, "search"});
  std::string final_key =
      EvaluationKey(CandidateId(KernelId(e), {{"B", "1"}}), "d", {{"final", 0}});
  store->PutEvaluation("run", e, {{"B", "1"}}, final_key, Verdict(Status::kOk, 1), {-1, "final"});
  std::vector<StoredEvaluation> evs = store->RunEvaluations("run");
  ASSERT_EQ(evs.size(), 2u);
  EXPECT_EQ(evs[0].proposal, 1);
  EXPECT_EQ(evs[0].purpose, "search");
  EXPECT_EQ(evs[1].proposal, -1);
  EXPECT_EQ(evs[1].purpose, "final");
}

// A store written by the first schema (before proposals were kept) opens and keeps its verdicts.
TEST_F(StoreTest, AVersionOneStoreIsMigrated) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  const char* v1 = R"(
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (1);
CREATE TABLE runs (name TEXT PRIMARY KEY, task TEXT NOT NULL, device TEXT NOT NULL,
  settings TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE kernels (id TEXT PRIMARY KEY, path TEXT NOT NULL, language TEXT NOT NULL,
  entry TEXT NOT NULL, source TEXT NOT NULL);
CREATE TABLE candidates (id TEXT PRIMARY KEY, kernel_id TEXT NOT NULL REFERENCES kernels(id),
  config TEXT NOT NULL);
CREATE TABLE evaluations (key TEXT PRIMARY KEY, seq INTEGER NOT NULL,
  run TEXT NOT NULL REFERENCES runs(name), candidate_id TEXT NOT NULL REFERENCES candidates(id),
  status TEXT NOT NULL, time_ms REAL, verdict TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE INDEX evaluations_by_run ON evaluations(run, seq);
CREATE TABLE archive (run TEXT NOT NULL REFERENCES runs(name), cell TEXT NOT NULL,
  candidate_id TEXT NOT NULL REFERENCES candidates(id), speedup REAL NOT NULL,
  PRIMARY KEY (run, cell));
CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, run TEXT NOT NULL, kind TEXT NOT NULL,
  data TEXT NOT NULL, created_at TEXT NOT NULL);
INSERT INTO runs VALUES ('old', 't', 'd', '{}', '2026-12-01T00:00:00Z');
INSERT INTO kernels VALUES ('k1', 'k.cl', 'opencl', 'k', 'src');
INSERT INTO candidates VALUES ('c1', 'k1', '{"B":1}');
INSERT INTO evaluations VALUES ('e1', 1, 'old', 'c1', 'ok', 0.5,
  '{"status":"ok","reason":"","config":{"B":1}}', '2026-12-01T00:00:00Z');
)";
  ASSERT_EQ(sqlite3_exec(db, v1, nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto store = OpenStore(path_);
  EXPECT_EQ(store->schema_version(), SqliteSchemaVersion());
  std::vector<StoredEvaluation> evs = store->RunEvaluations("old");
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(evs[0].purpose, "search");
  EXPECT_EQ(evs[0].proposal, -1);
  EXPECT_TRUE(store->RunProposals("old").empty());
}

TEST_F(StoreTest, AWriterKilledMidStreamLosesNothingItCommitted) {
  OpenStore(path_)->OpenRun({"run", "t", "d", {}, ""});
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // writes until it is killed
    auto store = OpenStore(path_);
    Kernel k = SomeKernel();
    for (int i = 0;; ++i) {
      Config c = {{"B", "1"}, {"I", std::to_string(i)}};
      std::string cand = CandidateId(KernelId(k), c);
      store->PutEvaluation("run", k, c, EvaluationKey(cand, "d", {}), Verdict(Status::kOk, 1 + i));
    }
  }
  auto store = OpenStore(path_);
  for (int waited = 0; store->RunEvaluations("run").size() < 200 && waited < 2000; ++waited)
    usleep(5000);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);

  auto reopened = OpenStore(path_);
  std::vector<StoredEvaluation> all = reopened->RunEvaluations("run");
  ASSERT_GE(all.size(), 200u);
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].seq, static_cast<long long>(i) + 1);  // no gaps, nothing half-written
    EXPECT_EQ(all[i].config.at("I"), std::to_string(i));
    EXPECT_DOUBLE_EQ(all[i].evaluation.time->median_ms, 1.0 + static_cast<double>(i));
  }
  // Resuming re-offers what was already there: nothing is duplicated.
  Kernel k = SomeKernel();
  for (size_t i = 0; i < all.size(); ++i) {
    Config c = {{"B", "1"}, {"I", std::to_string(i)}};
    EXPECT_FALSE(reopened->PutEvaluation("run", k, c,
                                         EvaluationKey(CandidateId(KernelId(k), c), "d", {}),
                                         Verdict(Status::kOk, 99)));
  }
  EXPECT_EQ(reopened->RunEvaluations("run").size(), all.size());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "ok");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

}  // namespace
}  // namespace kf
