#include "store/store.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <functional>
#include <set>
#include <thread>

#include "core/input_error.hpp"
#include "store/schema.hpp"
#include "test_postgres.hpp"
#ifdef KF_HAVE_POSTGRES
#include "store/postgres/pg_connection.hpp"
#endif

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

enum class Backend { kSqlite, kPostgres };
void PrintTo(Backend b, std::ostream* out) {
  *out << (b == Backend::kSqlite ? "sqlite" : "postgres");
}
std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return ::testing::PrintToString(info.param);
}

// A fresh, empty store of either kind: a file of its own, or a schema of its own on the test
// PostgreSQL server (skipped, saying why, where there is none).
class StoreFixture : public ::testing::Test {
 protected:
  void Start(Backend backend) {
    backend_ = backend;
    if (backend == Backend::kSqlite) {
      path_ =
          (fs::temp_directory_path() / ("kf_store_" + std::to_string(getpid()) + ".db")).string();
      Clean();
      url_ = "sqlite:" + path_;
      return;
    }
    std::string why_not;
    server_ = TestPostgresUrl(&why_not);
    if (server_.empty()) GTEST_SKIP() << "PostgreSQL: " << why_not;
    url_ = FreshPostgresStoreUrl(server_, &schema_);
  }
  void TearDown() override {
    if (backend_ == Backend::kSqlite) Clean();
    if (!schema_.empty()) DropTestSchema(server_, schema_);
  }
  void Clean() {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path_ + suffix);
  }
  std::unique_ptr<Store> Open() { return OpenStore(url_); }
  // SQL behind the store's back, in its own dialect's connection.
  void Exec(const std::string& sql) {
    if (backend_ == Backend::kPostgres) return ExecInSchema(server_, schema_, sql);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
        << (error ? error : "");
    sqlite3_free(error);
    sqlite3_close(db);
  }

  Backend backend_ = Backend::kSqlite;
  std::string url_, path_, server_, schema_;
};

// Every test of the store, against SQLite and against PostgreSQL.
class StoreTest : public StoreFixture, public ::testing::WithParamInterface<Backend> {
 protected:
  void SetUp() override { Start(GetParam()); }
};

// What only a shared store has: the run's lease.
class PostgresStoreTest : public StoreFixture {
 protected:
  void SetUp() override { Start(Backend::kPostgres); }
};

TEST_P(StoreTest, CreatesTheSchemaAndReopensIt) {
  {
    auto store = Open();
    EXPECT_EQ(store->schema_version(), SchemaVersion());
    store->OpenRun({"r1", "rope_llama3", "cuda:0", {{"budget", 10}}, ""});
  }
  // A bare path works too.
  auto again = GetParam() == Backend::kSqlite ? OpenStore(path_) : Open();
  ASSERT_TRUE(again->FindRun("r1"));
  EXPECT_EQ(again->FindRun("r1")->settings["budget"], 10);
  EXPECT_FALSE(again->FindRun("r2"));
}

TEST_P(StoreTest, RefusesASchemaNewerThanItKnows) {
  Open()->OpenRun({"r", "t", "d", {}, ""});
  Exec("INSERT INTO schema_version VALUES (999)");
  try {
    Open();
    FAIL() << "a newer schema was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("newer than this kfoundry knows"), std::string::npos)
        << e.what();
  }
}

TEST_P(StoreTest, EvaluationsAreWrittenOnceAndKeepTheirOrder) {
  auto store = Open();
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

  // A batch: one transaction; a key already stored, or twice in the batch, is written once.
  std::string key3 =
      EvaluationKey(CandidateId(KernelId(k), {{"B", "3"}}), "opencl:0", {{"sizes", "cpu"}});
  std::vector<bool> added =
      store->PutEvaluations("run", {{k, {{"B", "3"}}, key3, Verdict(Status::kOk, 0.25), {}},
                                    {k, {{"B", "1"}}, key, Verdict(Status::kOk, 0.9), {}},
                                    {k, {{"B", "3"}}, key3, Verdict(Status::kOk, 0.8), {}}});
  EXPECT_EQ(added, (std::vector<bool>{true, false, false}));
  all = store->RunEvaluations("run");
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[2].seq, 3);
  EXPECT_EQ(all[2].key, key3);
  EXPECT_DOUBLE_EQ(all[2].evaluation.time->median_ms, 0.25);
}

TEST_P(StoreTest, RunsResumeByNameButNotForAnotherTask) {
  auto store = Open();
  RunInfo first = store->OpenRun({"run", "rope_llama3", "cuda:0", {}, ""});
  RunInfo again = store->OpenRun({"run", "rope_llama3", "cuda:0", {}, ""});
  EXPECT_EQ(first.created_at, again.created_at);
  EXPECT_THROW(store->OpenRun({"run", "gemm", "cuda:0", {}, ""}), InputError);
}

TEST_P(StoreTest, TheArchiveKeepsTheBestPerCell) {
  auto store = Open();
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

TEST_P(StoreTest, ProposalsAreKeptAsTheyMoveOnAndFinishInOrder) {
  auto store = Open();
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
TEST_P(StoreTest, AVersionOneStoreIsMigrated) {
  // SQLite's version 1 spelled out (not taken from the migrations, which could be edited by
  // mistake); PostgreSQL's is its first migration.
  const char* v1_sqlite = R"(
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
)";
  Exec(std::string(GetParam() == Backend::kSqlite ? v1_sqlite : Migrations()[0].postgres) + R"(
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (1);
INSERT INTO runs VALUES ('old', 't', 'd', '{}', '2026-12-01T00:00:00Z');
INSERT INTO kernels VALUES ('k1', 'k.cl', 'opencl', 'k', 'src');
INSERT INTO candidates VALUES ('c1', 'k1', '{"B":1}');
INSERT INTO evaluations VALUES ('e1', 1, 'old', 'c1', 'ok', 0.5,
  '{"status":"ok","reason":"","config":{"B":1}}', '2026-12-01T00:00:00Z');
)");
  auto store = Open();
  EXPECT_EQ(store->schema_version(), SchemaVersion());
  std::vector<StoredEvaluation> evs = store->RunEvaluations("old");
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(evs[0].purpose, "search");
  EXPECT_EQ(evs[0].proposal, -1);
  EXPECT_TRUE(store->RunProposals("old").empty());
}

WorkerRecord SomeWorker(const std::string& host, long long pid, const std::string& role) {
  WorkerRecord w;
  w.id = fmt::format("{}:{}:{}", host, pid, role);
  w.host = host;
  w.role = role;
  w.pid = pid;
  w.queue = "run.opencl.x.pocl";
  w.devices = nlohmann::json::array({{{"backend", "opencl"}, {"name", "pocl"}}});
  w.info = {{"version", "0.1"}, {"peak_gbs", {12.5}}};
  return w;
}

// A store at version 3 (before workers and task bundles) is upgraded to 4 and keeps its runs.
TEST_P(StoreTest, AVersionThreeStoreIsMigrated) {
  std::string v3;
  for (size_t v = 0; v < 3; ++v) {
    v3 += GetParam() == Backend::kSqlite ? Migrations()[v].sqlite : Migrations()[v].postgres;
  }
  Exec(v3 + R"(
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (1), (2), (3);
INSERT INTO runs VALUES ('old', 't', 'd', '{}', '2026-12-01T00:00:00Z');
)");
  auto store = Open();
  EXPECT_EQ(store->schema_version(), SchemaVersion());
  EXPECT_GE(SchemaVersion(), 4);
  EXPECT_TRUE(store->FindRun("old"));
  EXPECT_TRUE(store->Workers().empty());
  store->PutWorker(SomeWorker("h", 1, "run"));
  EXPECT_EQ(store->Workers().size(), 1u);
  EXPECT_TRUE(store->PutTaskBundle({"t0", "x", {{"a", "b"}}}));
}

TEST_P(StoreTest, WorkersHeartbeatsAreKeptOneRowEach) {
  auto store = Open();
  WorkerRecord a = SomeWorker("gpu1", 100, "run"), b = SomeWorker("cpu2", 200, "build");
  store->PutWorker(a);
  usleep(20000);
  store->PutWorker(b);
  std::vector<WorkerRecord> all = store->Workers();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id, b.id);  // the most recent heartbeat first
  EXPECT_EQ(all[1].id, a.id);
  EXPECT_EQ(all[1].host, "gpu1");
  EXPECT_EQ(all[1].role, "run");
  EXPECT_EQ(all[1].pid, 100);
  EXPECT_EQ(all[1].devices, a.devices);
  EXPECT_EQ(all[1].queue, a.queue);
  EXPECT_EQ(all[1].info, a.info);
  EXPECT_EQ(all[1].state, "running");
  EXPECT_EQ(all[1].jobs_done, 0);
  EXPECT_EQ(all[1].started_at, all[1].heartbeat_at);
  EXPECT_EQ(all[1].heartbeat_at.size(), std::string("2026-12-04T10:15:00.123Z").size());
  EXPECT_LT(all[1].heartbeat_at, all[0].heartbeat_at);
  std::string started = all[1].started_at;

  // Its next heartbeat updates the row: it comes first, keeps when it started, shows its work.
  usleep(20000);
  a.jobs_done = 7;
  a.state = "draining";
  store->PutWorker(a);
  all = store->Workers();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id, a.id);
  EXPECT_EQ(all[0].jobs_done, 7);
  EXPECT_EQ(all[0].state, "draining");
  EXPECT_EQ(all[0].started_at, started);
  EXPECT_GT(all[0].heartbeat_at, started);
  EXPECT_EQ(all[1].id, b.id);
}

TEST_P(StoreTest, AHeartbeatsAgeGrowsUntilTheNext) {
  auto store = Open();
  WorkerRecord w = SomeWorker("gpu1", 100, "run");
  store->PutWorker(w);
  double first = store->Workers().at(0).heartbeat_age_s;
  EXPECT_GE(first, -0.01);  // the same clock stamps and measures
  EXPECT_LT(first, 5.0);
  usleep(300000);
  double later = store->Workers().at(0).heartbeat_age_s;
  EXPECT_GT(later, first + 0.25);
  EXPECT_LT(later, first + 5.0);
  store->PutWorker(w);
  EXPECT_LT(store->Workers().at(0).heartbeat_age_s, later);

  // The age is read from the stored stamp: one set a known time ago reads that old.
  Exec("UPDATE workers SET heartbeat_at = '2026-01-01T00:00:00.000Z'");
  std::tm t{};
  t.tm_year = 2026 - 1900;
  t.tm_mday = 1;
  double expected = std::difftime(std::time(nullptr), timegm(&t));
  EXPECT_NEAR(store->Workers().at(0).heartbeat_age_s, expected, 5.0);
}

TEST_P(StoreTest, TaskBundlesAreStoredOnceWithEveryByte) {
  auto store = Open();
  TaskBundle bundle{"t0123", "softmax_rows", {}};
  bundle.files["task.toml"] = "name = \"softmax_rows\"\n";
  bundle.files["data/blob.bin"] = std::string("\0\x01\xff\xfe\0tail\0", 10);
  std::string all_bytes;
  for (int c = 0; c < 256; ++c) all_bytes.push_back(static_cast<char>(c));
  bundle.files["data/all.bin"] = all_bytes;
  bundle.files["empty.txt"] = "";
  EXPECT_TRUE(store->PutTaskBundle(bundle));
  TaskBundle changed = bundle;
  changed.files["task.toml"] = "edited";
  EXPECT_FALSE(store->PutTaskBundle(changed));  // once under its id: the first stands

  std::optional<TaskBundle> found = Open()->FindTaskBundle("t0123");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->id, bundle.id);
  EXPECT_EQ(found->name, "softmax_rows");
  EXPECT_EQ(found->files, bundle.files);
  EXPECT_EQ(found->files.at("data/blob.bin").size(), 10u);
  EXPECT_FALSE(store->FindTaskBundle("t-unknown"));
}

TEST_P(StoreTest, ACancelledScopeIsSeenByEveryReaderAndOthersAreNot) {
  auto store = Open();
  EXPECT_FALSE(store->ScopeCancelled("run.a1.0"));
  store->CancelScope("run.a1.0");
  store->CancelScope("run.a1.0");  // again: no error, still cancelled
  EXPECT_TRUE(Open()->ScopeCancelled("run.a1.0"));
  EXPECT_FALSE(Open()->ScopeCancelled("run.a1.1"));
}

TEST_P(StoreTest, AWriterKilledMidStreamLosesNothingItCommitted) {
  Open()->OpenRun({"run", "t", "d", {}, ""});
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // writes until it is killed
    try {
      auto store = Open();
      Kernel k = SomeKernel();
      for (int i = 0;; ++i) {
        Config c = {{"B", "1"}, {"I", std::to_string(i)}};
        std::string cand = CandidateId(KernelId(k), c);
        store->PutEvaluation("run", k, c, EvaluationKey(cand, "d", {}),
                             Verdict(Status::kOk, 1 + i));
      }
    } catch (...) {
      _exit(1);
    }
  }
  auto store = Open();
  for (int waited = 0; store->RunEvaluations("run").size() < 200 && waited < 2000; ++waited)
    usleep(5000);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);

  auto reopened = Open();
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
  if (GetParam() != Backend::kSqlite) return;
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "ok");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

// Writers in several processes and threads, each with its own connection, append to one run at
// once, each re-offering keys another writes too: every key once, the run's order 1..N with no
// gap and no twin, each writer's verdicts in the order it wrote them.
// Runs `work(i)` in `n` child processes; each exits 0, or 1 when `work` throws (said on stderr
// as `what` i: why). Their pids, -1 for a fork that failed.
std::vector<pid_t> ForkEach(int n, const char* what, const std::function<void(int)>& work) {
  std::vector<pid_t> children;
  for (int i = 0; i < n; ++i) {
    pid_t child = fork();
    if (child == 0) {
      try {
        work(i);
      } catch (const std::exception& e) {
        fprintf(stderr, "%s %d: %s\n", what, i, e.what());
        _exit(1);
      }
      _exit(0);
    }
    children.push_back(child);
  }
  return children;
}

// Waits for them all; how many did not exit 0.
int FailedChildren(const std::vector<pid_t>& children) {
  int failed = 0;
  for (pid_t child : children) {
    int status = 0;
    failed += child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
              WEXITSTATUS(status) != 0;
  }
  return failed;
}

TEST_P(StoreTest, SeveralWritersAppendToOneRunWithoutGapsOrTwins) {
  constexpr int kProcesses = 3, kThreads = 3, kPerWriter = 60, kBatch = 5;
  constexpr int kWriters = kProcesses + kThreads;
  Open()->OpenRun({"run", "t", "d", {}, ""});
  Kernel k = SomeKernel();
  auto key = [&](int writer, int i) {
    Config c = {{"W", std::to_string(writer)}, {"I", std::to_string(i)}};
    return EvaluationWrite{k,
                           c,
                           EvaluationKey(CandidateId(KernelId(k), c), "d", {}),
                           Verdict(Status::kOk, 1 + i),
                           {writer, "search"}};
  };
  // Writer w writes its own keys in batches, each batch also re-offering writer w+1's.
  auto write = [&](int writer) {
    auto store = Open();
    for (int i = 0; i < kPerWriter; i += kBatch) {
      std::vector<EvaluationWrite> batch;
      for (int j = i; j < i + kBatch; ++j) {
        batch.push_back(key(writer, j));
        batch.push_back(key((writer + 1) % kWriters, j));
      }
      store->PutEvaluations("run", batch);
    }
  };
  std::vector<pid_t> children = ForkEach(kProcesses, "writer", [&](int p) { write(kThreads + p); });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(write, t);
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(FailedChildren(children), 0) << "a writer process failed";

  std::vector<StoredEvaluation> all = Open()->RunEvaluations("run");
  ASSERT_EQ(all.size(), static_cast<size_t>(kWriters * kPerWriter));
  std::set<std::string> keys;
  std::vector<int> last_i(kWriters, -1);
  for (size_t n = 0; n < all.size(); ++n) {
    EXPECT_EQ(all[n].seq, static_cast<long long>(n) + 1);
    EXPECT_TRUE(keys.insert(all[n].key).second) << "twice: " << all[n].key;
    int writer = std::stoi(all[n].config.at("W")), i = std::stoi(all[n].config.at("I"));
    EXPECT_EQ(all[n].key, key(writer, i).key);
    // Written by the writer or by its neighbour, whichever came first: in i's order either way.
    EXPECT_GT(i, last_i[writer]);
    last_i[writer] = i;
  }
}

// A coordinator and its workers start together on a store file none has made yet: every one of
// them opens it (SQLite refuses the switch to WAL at once while another holds the new file).
TEST_P(StoreTest, ProcessesOpeningANewStoreAtOnceAllGetIt) {
  constexpr int kProcesses = 6, kRounds = 10;
  for (int round = 0; round < kRounds; ++round) {
    if (backend_ == Backend::kSqlite) Clean();
    std::vector<pid_t> children = ForkEach(kProcesses, "opener", [&](int) { Open()->Workers(); });
    EXPECT_EQ(FailedChildren(children), 0) << "an opener failed in round " << round;
  }
}

// Opens the run once its writer's session has ended (the server ends it moments after the
// connection closes); false if it never does.
bool OpenRunOnceFree(Store& store, const std::string& run) {
  for (int tries = 0; tries < 100; ++tries) {
    try {
      store.OpenRun({run, "t", "d", {}, ""});
      return true;
    } catch (const InputError&) {
      usleep(50000);
    }
  }
  return false;
}

TEST_F(PostgresStoreTest, ASecondWriterOfARunIsRefusedAndToldWhoHoldsIt) {
  auto first = Open();
  first->OpenRun({"leased", "t", "d", {}, ""});
  first->OpenRun({"leased", "t", "d", {}, ""});  // its own lease again: fine
  auto second = Open();
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  try {
    second->OpenRun({"leased", "t", "d", {}, ""});
    FAIL() << "a second writer was let in";
  } catch (const InputError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("run leased"), std::string::npos) << m;
    EXPECT_NE(m.find("pid " + std::to_string(getpid())), std::string::npos) << m;
    EXPECT_NE(m.find("since 20"), std::string::npos) << m;
    EXPECT_NE(m.find(std::string("host ") + std::string(host).substr(0, 8)), std::string::npos)
        << m;
    EXPECT_NE(m.find("one writer per run"), std::string::npos) << m;
  }
  // It may read the run, and write a run of its own.
  EXPECT_TRUE(second->FindRun("leased"));
  second->OpenRun({"other", "t", "d", {}, ""});
  first.reset();  // the writer ends: its lease goes with its connection
  EXPECT_TRUE(OpenRunOnceFree(*second, "leased"));
}

// A writer killed while it holds the lease leaves none behind: the server drops its session.
TEST_F(PostgresStoreTest, AKilledWritersLeaseIsFreedWithItsConnection) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      auto store = Open();
      store->OpenRun({"leased", "t", "d", {}, ""});
      if (write(ready[1], "x", 1) != 1) _exit(1);
      pause();
    } catch (...) {
      _exit(1);
    }
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1) << "the writer could not take the lease";
  auto store = Open();
  EXPECT_THROW(store->OpenRun({"leased", "t", "d", {}, ""}), InputError);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_TRUE(OpenRunOnceFree(*store, "leased")) << "the killed writer's lease outlived it";
  close(ready[0]);
  close(ready[1]);
}

#ifdef KF_HAVE_POSTGRES
// A key of a batch is being written for another run when the batch comes: the batch's verdicts
// are numbered with no hole (the batch falls back to one row at a time).
TEST_F(PostgresStoreTest, ABatchThatRacesAnotherRunForAKeyLeavesNoHole) {
  auto store = Open();
  store->OpenRun({"a", "t", "d", {}, ""});
  auto other = Open();
  other->OpenRun({"b", "t", "d", {}, ""});
  Kernel k = SomeKernel();
  std::vector<EvaluationWrite> batch;
  for (const char* b : {"1", "2", "3"}) {
    Config c = {{"B", b}};
    batch.push_back(
        {k, c, EvaluationKey(CandidateId(KernelId(k), c), "d", {}), Verdict(Status::kOk, 1), {}});
  }
  // The kernel and the second candidate exist; another session writes the second key for run b
  // and holds its transaction open.
  other->PutEvaluation("b", k, batch[1].config, "unrelated", Verdict(Status::kOk, 1));
  PgConnection racer(url_, "racer");
  racer.Exec("BEGIN");
  racer.Exec(
      "INSERT INTO evaluations (key, seq, run, candidate_id, status, verdict, created_at) VALUES "
      "($1, 2, 'b', $2, 'ok', '{}', 'now')",
      {batch[1].key, CandidateId(KernelId(k), batch[1].config)});
  std::vector<bool> added;
  std::thread writer([&] { added = store->PutEvaluations("a", batch); });
  usleep(300000);  // the batch waits for the racer's key
  racer.Exec("COMMIT");
  writer.join();
  EXPECT_EQ(added, (std::vector<bool>{true, false, true}));
  std::vector<StoredEvaluation> all = store->RunEvaluations("a");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].seq, 1);
  EXPECT_EQ(all[0].key, batch[0].key);
  EXPECT_EQ(all[1].seq, 2);
  EXPECT_EQ(all[1].key, batch[2].key);
}
#endif

INSTANTIATE_TEST_SUITE_P(Sqlite, StoreTest, ::testing::Values(Backend::kSqlite), BackendName);
INSTANTIATE_TEST_SUITE_P(Postgres, StoreTest, ::testing::Values(Backend::kPostgres), BackendName);

TEST(StoreUrlTest, PasswordsAreRedactedWhereverAUrlIsPrinted) {
  EXPECT_EQ(RedactStoreUrl("postgresql://kf:s3cret@db.lan:5432/runs"),
            "postgresql://kf:***@db.lan:5432/runs");
  EXPECT_EQ(RedactStoreUrl("postgres://kf:p@ss:w0rd@db/runs?sslmode=require"),
            "postgres://kf:***@db/runs?sslmode=require");
  EXPECT_EQ(RedactStoreUrl("postgresql://kf@db/runs?password=s3cret&sslmode=require"),
            "postgresql://kf@db/runs?password=***&sslmode=require");
  EXPECT_EQ(RedactStoreUrl("postgresql://kf@127.0.0.1:5433/kfoundry"),
            "postgresql://kf@127.0.0.1:5433/kfoundry");  // no password: unchanged
  EXPECT_EQ(RedactStoreUrl("postgresql:///kf?host=/run/pg"), "postgresql:///kf?host=/run/pg");
  EXPECT_EQ(RedactStoreUrl("sqlite:my:file@x.db"), "sqlite:my:file@x.db");
}

TEST(StoreUrlTest, AStoreThatCannotBeOpenedIsNamedWithoutItsPassword) {
  EXPECT_THROW(OpenStore("mysql://localhost/kf"), InputError);
  // A password in the URL is refused (it would show in ps), named without it.
  for (const char* url : {"postgresql://kf:s3cret@/kf?host=/nonexistent-kf-socket-dir",
                          "postgresql://kf@/kf?host=/nonexistent-kf-socket-dir&password=s3cret"}) {
    try {
      OpenStore(url);
      FAIL() << "opened " << url;
    } catch (const InputError& e) {
      std::string m = e.what();
      EXPECT_EQ(m.find("s3cret"), std::string::npos) << m;
      EXPECT_NE(m.find("***"), std::string::npos) << m;
      EXPECT_NE(m.find("PGPASSWORD"), std::string::npos) << m;
    }
  }
  // A server that is not there (a socket folder that does not exist: no network used).
  EXPECT_THROW(OpenStore("postgresql://kf@/kf?host=/nonexistent-kf-socket-dir"), InputError);
}

}  // namespace
}  // namespace kf
