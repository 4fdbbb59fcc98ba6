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
