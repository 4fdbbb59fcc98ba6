#include "store/sqlite/sqlite_store.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>
#include <sqlite3.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "core/codec.hpp"
#include "core/input_error.hpp"
#include "store/rows.hpp"
#include "store/schema.hpp"

namespace kf {

namespace {

// A run's row: the query and how its columns make a RunInfo.
constexpr const char* kRunColumns = "SELECT name, task, device, settings, created_at FROM runs";
RunInfo RunFrom(SQLite::Statement& q) {
  RunInfo r;
  r.name = q.getColumn(0).getString();
  r.task = q.getColumn(1).getString();
  r.device = q.getColumn(2).getString();
  r.settings = nlohmann::json::parse(q.getColumn(3).getString(), nullptr, false);
  r.created_at = q.getColumn(4).getString();
  return r;
}

// A worker's row (the heartbeat's age on this host's clock, as its stamp).
constexpr const char* kWorkerColumns =
    "SELECT id, host, role, pid, devices, queue, state, jobs_done, info, started_at, "
    "heartbeat_at, (julianday('now') - julianday(heartbeat_at)) * 86400.0 FROM workers";
WorkerRecord WorkerFrom(SQLite::Statement& q) {
  WorkerRecord w;
  w.id = q.getColumn(0).getString();
  w.host = q.getColumn(1).getString();
  w.role = q.getColumn(2).getString();
  w.pid = q.getColumn(3).getInt64();
  w.devices = nlohmann::json::parse(q.getColumn(4).getString());
  w.queue = q.getColumn(5).getString();
  w.state = q.getColumn(6).getString();
  w.jobs_done = q.getColumn(7).getInt64();
  w.info = nlohmann::json::parse(q.getColumn(8).getString());
  w.started_at = q.getColumn(9).getString();
  w.heartbeat_at = q.getColumn(10).getString();
  w.heartbeat_age_s = q.getColumn(11).getDouble();
  return w;
}

class SqliteStore : public Store {
 public:
  explicit SqliteStore(const std::string& path)
      : path_(path), db_(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE, 10000) {
    SetWalMode();
    db_.exec("PRAGMA synchronous = NORMAL");
    db_.exec("PRAGMA foreign_keys = ON");
    Migrate();
  }

  int schema_version() const override { return version_; }

  RunInfo OpenRun(const RunInfo& wanted) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Transaction tx(db_, SQLite::TransactionBehavior::IMMEDIATE);
    if (std::optional<RunInfo> existing = FindRun(wanted.name)) {
      if (existing->task != wanted.task || existing->device != wanted.device) {
        throw InputError(path_, 0, "run " + wanted.name,
                         fmt::format("exists for task '{}' on '{}', not '{}' on '{}'",
                                     existing->task, existing->device, wanted.task, wanted.device));
      }
      return *existing;
    }
    SQLite::Statement insert(
        db_, "INSERT INTO runs (name, task, device, settings, created_at) VALUES (?, ?, ?, ?, ?)");
    RunInfo run = wanted;
    run.created_at = StoreTimestamp();
    insert.bind(1, run.name);
    insert.bind(2, run.task);
    insert.bind(3, run.device);
    insert.bind(4, run.settings.dump());
    insert.bind(5, run.created_at);
    insert.exec();
    tx.commit();
    return run;
  }

  std::optional<RunInfo> FindRun(const std::string& name) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Statement q(db_, std::string(kRunColumns) + " WHERE name = ?");
    q.bind(1, name);
    if (!q.executeStep()) return std::nullopt;
    return RunFrom(q);
  }

  std::vector<RunInfo> Runs() override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Statement q(db_, std::string(kRunColumns) + " ORDER BY created_at, name");
    std::vector<RunInfo> out;
    while (q.executeStep()) out.push_back(RunFrom(q));
    return out;
  }

  RunStats Stats(const std::string& run) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Statement q(
        db_,
        "SELECT (SELECT COUNT(*) FROM evaluations WHERE run = ?1), "
        "(SELECT COALESCE(MAX(created_at), '') FROM evaluations WHERE run = ?1), "
        "(SELECT COUNT(*) FROM proposals WHERE run = ?1), "
        "(SELECT COALESCE(MAX(created_at), '') FROM events WHERE run = ?1 AND kind = 'finish')");
    q.bind(1, run);
    q.executeStep();
    RunStats s;
    s.evaluations = q.getColumn(0).getInt64();
    s.last_evaluation_at = q.getColumn(1).getString();
    s.proposals = q.getColumn(2).getInt64();
    s.finished_at = q.getColumn(3).getString();
    return s;
  }

  std::string RunVersion(const std::string& run) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Statement q(
        db_,
        "SELECT (SELECT COALESCE(MAX(seq), 0) FROM evaluations WHERE run = ?1), "
        "(SELECT COUNT(*) || '.' || COALESCE(MAX(updated_at), '') FROM proposals WHERE run = ?1), "
        "(SELECT COUNT(*) FROM events WHERE run = ?1)");
    q.bind(1, run);
    q.executeStep();
    return fmt::format("{}:{}:{}", q.getColumn(0).getInt64(), q.getColumn(1).getString(),
                       q.getColumn(2).getInt64());
  }

  bool PutKernel(const Kernel& kernel) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Transaction tx(db_, SQLite::TransactionBehavior::IMMEDIATE);
    bool added = InsertKernel(kernel);
    tx.commit();
    return added;
  }

  std::vector<bool> PutEvaluations(const std::string& run,
                                   const std::vector<EvaluationWrite>& writes) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Transaction tx(db_, SQLite::TransactionBehavior::IMMEDIATE);
    std::vector<bool> added;
    for (const EvaluationWrite& w : writes) added.push_back(InsertEvaluation(run, w));
    tx.commit();
    return added;
  }

  std::optional<Evaluation> FindEvaluation(const std::string& key) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Statement q(db_, "SELECT verdict FROM evaluations WHERE key = ?");
    q.bind(1, key);
    if (!q.executeStep()) return std::nullopt;
    return EvaluationFromJson(nlohmann::json::parse(q.getColumn(0).getString()));
  }

  std::vector<StoredEvaluation> RunEvaluations(const std::string& run) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Statement q(
        db_,
        "SELECT e.seq, e.key, e.candidate_id, c.kernel_id, c.config, e.verdict, e.proposal, "
        "e.purpose, e.created_at FROM evaluations e JOIN candidates c ON c.id = e.candidate_id "
        "WHERE e.run = ? "
        "ORDER BY e.seq");
    q.bind(1, run);
    std::vector<StoredEvaluation> out;
    while (q.executeStep()) {
      StoredEvaluation s;
      s.seq = q.getColumn(0).getInt64();
      s.key = q.getColumn(1).getString();
      s.candidate_id = q.getColumn(2).getString();
      s.kernel_id = q.getColumn(3).getString();
      s.config = ConfigFromJson(nlohmann::json::parse(q.getColumn(4).getString()));
      s.evaluation = EvaluationFromJson(nlohmann::json::parse(q.getColumn(5).getString()));
      s.proposal = q.getColumn(6).isNull() ? -1 : q.getColumn(6).getInt();
      s.purpose = q.getColumn(7).getString();
      s.created_at = q.getColumn(8).getString();
      out.push_back(std::move(s));
    }
    return out;
  }

  std::optional<Kernel> FindKernel(const std::string& kernel_id) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Statement q(db_, "SELECT path, source FROM kernels WHERE id = ?");
    q.bind(1, kernel_id);
    if (!q.executeStep()) return std::nullopt;
    return ParseKernel(q.getColumn(0).getString(), q.getColumn(1).getString());
  }

  void PutProposal(const std::string& run, const ProposalRecord& r) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Transaction tx(db_, SQLite::TransactionBehavior::IMMEDIATE);
    if (r.proposal) InsertKernel(r.proposal->kernel);
    bool final_state = r.Final();
    SQLite::Statement upsert(
        db_,
        "INSERT INTO proposals (run, idx, state, request, kernel_id, proposal, outcome, done_seq, "
        "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, CASE WHEN ? THEN (SELECT "
        "COALESCE(MAX(done_seq), 0) + 1 FROM proposals WHERE run = ?) ELSE 0 END, ?, ?) "
        "ON CONFLICT (run, idx) DO UPDATE SET state = excluded.state, request = excluded.request, "
        "kernel_id = excluded.kernel_id, proposal = excluded.proposal, outcome = "
        "excluded.outcome, updated_at = excluded.updated_at, done_seq = CASE WHEN "
        "proposals.done_seq = 0 AND ? THEN (SELECT COALESCE(MAX(done_seq), 0) + 1 FROM proposals "
        "WHERE run = excluded.run) ELSE proposals.done_seq END");
    std::string now = StoreTimestamp();
    upsert.bind(1, run);
    upsert.bind(2, r.index);
    upsert.bind(3, std::string(ProposalStateName(r.state)));
    upsert.bind(4, r.request.dump());
    if (r.proposal) {
      upsert.bind(5, KernelId(r.proposal->kernel));
      upsert.bind(6, ProposalColumn(*r.proposal));
    } else {
      upsert.bind(5);
      upsert.bind(6);
    }
    upsert.bind(7, r.outcome.dump());
    upsert.bind(8, final_state ? 1 : 0);
    upsert.bind(9, run);
    upsert.bind(10, now);
    upsert.bind(11, now);
    upsert.bind(12, final_state ? 1 : 0);
    upsert.exec();
    tx.commit();
  }

  std::vector<ProposalRecord> RunProposals(const std::string& run) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Statement q(db_,
                        "SELECT p.idx, p.state, p.request, p.proposal, p.outcome, p.done_seq, "
                        "k.path, k.source FROM proposals p LEFT JOIN kernels k ON k.id = "
                        "p.kernel_id WHERE p.run = ? ORDER BY p.idx");
    q.bind(1, run);
    std::vector<ProposalRecord> out;
    while (q.executeStep()) {
      ProposalRecord r;
      r.index = q.getColumn(0).getInt();
      std::string state = q.getColumn(1).getString();
      r.state = ParseProposalState(state).value_or(ProposalState::kAbandoned);
      r.request = nlohmann::json::parse(q.getColumn(2).getString());
      if (!q.getColumn(3).isNull() && !q.getColumn(6).isNull()) {
        r.proposal = ProposalFromColumns(q.getColumn(3).getString(), q.getColumn(6).getString(),
                                         q.getColumn(7).getString());
      }
      r.outcome = nlohmann::json::parse(q.getColumn(4).getString());
      r.done_seq = q.getColumn(5).getInt64();
      out.push_back(std::move(r));
    }
    return out;
  }

  bool OfferArchiveCell(const std::string& run, const ArchiveEntry& entry) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Transaction tx(db_, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement upsert(
        db_,
        "INSERT INTO archive (run, cell, candidate_id, speedup) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (run, cell) DO UPDATE SET candidate_id = excluded.candidate_id, "
        "speedup = excluded.speedup WHERE excluded.speedup > archive.speedup");
    upsert.bind(1, run);
    upsert.bind(2, nlohmann::json(entry.cell).dump());
    upsert.bind(3, entry.candidate_id);
    upsert.bind(4, entry.speedup);
    bool changed = upsert.exec() > 0;
    tx.commit();
    return changed;
  }

  std::vector<ArchiveEntry> Archive(const std::string& run) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Statement q(
        db_, "SELECT cell, candidate_id, speedup FROM archive WHERE run = ? ORDER BY cell");
    q.bind(1, run);
    std::vector<ArchiveEntry> out;
    while (q.executeStep()) {
      out.push_back({nlohmann::json::parse(q.getColumn(0).getString()).get<std::vector<int>>(),
                     q.getColumn(1).getString(), q.getColumn(2).getDouble()});
    }
    return out;
  }

  void AddEvent(const std::string& run, const std::string& kind,
                const nlohmann::json& data) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Transaction tx(db_, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement insert(
        db_, "INSERT INTO events (run, kind, data, created_at) VALUES (?, ?, ?, ?)");
    insert.bind(1, run);
    insert.bind(2, kind);
    insert.bind(3, data.dump());
    insert.bind(4, StoreTimestamp());
    insert.exec();
    tx.commit();
  }

  std::vector<nlohmann::json> Events(const std::string& run) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Statement q(db_, "SELECT kind, data, created_at FROM events WHERE run = ? ORDER BY id");
    q.bind(1, run);
    std::vector<nlohmann::json> out;
    while (q.executeStep()) {
      out.push_back({{"kind", q.getColumn(0).getString()},
                     {"data", nlohmann::json::parse(q.getColumn(1).getString())},
                     {"at", q.getColumn(2).getString()}});
    }
    return out;
  }

  void PutPromptVersion(const std::string& run, const PromptVersionRecord& v) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Transaction tx(db_, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement upsert(
        db_,
        "INSERT INTO prompt_versions (run, component, version, parent_version, made_by, text, "
        "stats, meta, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (run, component, version) DO UPDATE SET stats = excluded.stats, "
        "updated_at = excluded.updated_at");
    std::string now = StoreTimestamp();
    upsert.bind(1, run);
    upsert.bind(2, v.component);
    upsert.bind(3, v.version);
    upsert.bind(4, v.parent_version);
    upsert.bind(5, v.made_by);
    upsert.bind(6, v.text);
    upsert.bind(7, v.stats.dump());
    upsert.bind(8, v.meta.dump());
    upsert.bind(9, now);
    upsert.bind(10, now);
    upsert.exec();
    tx.commit();
  }

  std::vector<PromptVersionRecord> RunPromptVersions(const std::string& run) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Statement q(db_,
                        "SELECT component, version, parent_version, made_by, text, stats, meta "
                        "FROM prompt_versions WHERE run = ? ORDER BY component, version");
    q.bind(1, run);
    std::vector<PromptVersionRecord> out;
    while (q.executeStep()) {
      PromptVersionRecord v;
      v.component = q.getColumn(0).getString();
      v.version = q.getColumn(1).getInt();
      v.parent_version = q.getColumn(2).getInt();
      v.made_by = q.getColumn(3).getString();
      v.text = q.getColumn(4).getString();
      v.stats = nlohmann::json::parse(q.getColumn(5).getString());
      v.meta = nlohmann::json::parse(q.getColumn(6).getString());
      out.push_back(std::move(v));
    }
    return out;
  }

  void PutWorker(const WorkerRecord& w) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Statement upsert(
        db_,
        "INSERT INTO workers (id, host, role, pid, devices, queue, state, jobs_done, info, "
        "started_at, heartbeat_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10) "
        "ON CONFLICT (id) DO UPDATE SET host = excluded.host, role = excluded.role, pid = "
        "excluded.pid, devices = excluded.devices, queue = excluded.queue, state = "
        "excluded.state, jobs_done = excluded.jobs_done, info = excluded.info, heartbeat_at = "
        "excluded.heartbeat_at");
    upsert.bind(1, w.id);
    upsert.bind(2, w.host);
    upsert.bind(3, w.role);
    upsert.bind(4, static_cast<int64_t>(w.pid));
    upsert.bind(5, w.devices.dump());
    upsert.bind(6, w.queue);
    upsert.bind(7, w.state);
    upsert.bind(8, static_cast<int64_t>(w.jobs_done));
    upsert.bind(9, w.info.dump());
    upsert.bind(10, StoreTimestamp());
    upsert.exec();
  }

  std::vector<WorkerRecord> Workers() override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Statement q(db_, std::string(kWorkerColumns) + " ORDER BY heartbeat_at DESC, id");
    std::vector<WorkerRecord> out;
    while (q.executeStep()) out.push_back(WorkerFrom(q));
    return out;
  }

  bool PutTaskBundle(const TaskBundle& bundle) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Statement insert(db_,
                             "INSERT OR IGNORE INTO task_bundles (id, name, files, bytes, "
                             "created_at) VALUES (?, ?, ?, ?, ?)");
    insert.bind(1, bundle.id);
    insert.bind(2, bundle.name);
    insert.bind(3, TaskBundleFilesColumn(bundle));
    insert.bind(4, static_cast<int64_t>(TaskBundleBytes(bundle)));
    insert.bind(5, StoreTimestamp());
    return insert.exec() > 0;
  }

  std::optional<TaskBundle> FindTaskBundle(const std::string& id) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Statement q(db_, "SELECT name, files FROM task_bundles WHERE id = ?");
    q.bind(1, id);
    if (!q.executeStep()) return std::nullopt;
    return TaskBundleFromColumns(id, q.getColumn(0).getString(), q.getColumn(1).getString());
  }

  void CancelScope(const std::string& scope) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Statement insert(
        db_, "INSERT OR IGNORE INTO cancelled_scopes (scope, cancelled_at) VALUES (?, ?)");
    insert.bind(1, scope);
    insert.bind(2, StoreTimestamp());
    insert.exec();
  }

  bool ScopeCancelled(const std::string& scope) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    SQLite::Statement q(db_, "SELECT 1 FROM cancelled_scopes WHERE scope = ?");
    q.bind(1, scope);
    return q.executeStep();
  }

 private:
  // Switching to WAL takes the file's exclusive lock and may be refused at once, without the busy
  // timeout, while another process opens the same new file (a coordinator and its workers
  // starting together): tried again for up to the busy timeout.
  void SetWalMode() {
    for (int waited_ms = 0;; waited_ms += 50) {
      try {
        db_.exec("PRAGMA journal_mode = WAL");
        return;
      } catch (const SQLite::Exception& e) {
        if (e.getErrorCode() != SQLITE_BUSY || waited_ms >= 10000) throw;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  void Migrate() {
    SQLite::Transaction tx(db_, SQLite::TransactionBehavior::IMMEDIATE);
    db_.exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
    SQLite::Statement q(db_, "SELECT MAX(version) FROM schema_version");
    q.executeStep();
    version_ = q.getColumn(0).isNull() ? 0 : q.getColumn(0).getInt();
    q.reset();
    if (version_ > SchemaVersion()) {
      throw InputError(
          path_, 0, "schema_version",
          fmt::format("the store has schema version {}, newer than this kfoundry knows ({})",
                      version_, SchemaVersion()));
    }
    for (int v = version_; v < SchemaVersion(); ++v) {
      db_.exec(Migrations()[static_cast<size_t>(v)].sqlite);
      SQLite::Statement record(db_, "INSERT INTO schema_version (version) VALUES (?)");
      record.bind(1, v + 1);
      record.exec();
    }
    version_ = SchemaVersion();
    tx.commit();
  }

  bool InsertEvaluation(const std::string& run, const EvaluationWrite& w) {
    InsertKernel(w.kernel);
    std::string kernel_id = KernelId(w.kernel);
    std::string candidate_id = CandidateId(kernel_id, w.config);
    SQLite::Statement cand(
        db_, "INSERT OR IGNORE INTO candidates (id, kernel_id, config) VALUES (?, ?, ?)");
    cand.bind(1, candidate_id);
    cand.bind(2, kernel_id);
    cand.bind(3, ConfigToJson(w.config).dump());
    cand.exec();
    SQLite::Statement insert(
        db_,
        "INSERT OR IGNORE INTO evaluations (key, seq, run, candidate_id, status, time_ms, verdict, "
        "created_at, proposal, purpose) VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM "
        "evaluations WHERE run = ?2), ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    const Evaluation& ev = w.evaluation;
    insert.bind(1, w.key);
    insert.bind(2, run);
    insert.bind(3, candidate_id);
    insert.bind(4, std::string(StatusName(ev.status)));
    if (ev.time) {
      insert.bind(5, ev.time->median_ms);
    } else {
      insert.bind(5);
    }
    insert.bind(6, EvaluationToJson(ev).dump());
    insert.bind(7, StoreTimestamp());
    if (w.purpose.proposal >= 0) {
      insert.bind(8, w.purpose.proposal);
    } else {
      insert.bind(8);
    }
    insert.bind(9, w.purpose.purpose);
    return insert.exec() > 0;
  }

  bool InsertKernel(const Kernel& k) {
    SQLite::Statement insert(
        db_,
        "INSERT OR IGNORE INTO kernels (id, path, language, entry, source) VALUES (?, ?, ?, ?, ?)");
    insert.bind(1, KernelId(k));
    insert.bind(2, k.path);
    insert.bind(3, std::string(LanguageName(k.language)));
    insert.bind(4, k.EntryNames());
    insert.bind(5, k.source);
    return insert.exec() > 0;
  }

  std::string path_;
  std::recursive_mutex mutex_;  // one connection, callers on several threads (proposers)
  SQLite::Database db_;
  int version_ = 0;
};

}  // namespace

std::unique_ptr<Store> OpenSqliteStore(const std::string& path) {
  try {
    return std::make_unique<SqliteStore>(path);
  } catch (const SQLite::Exception& e) {
    throw InputError(path, 0, "store", e.what());
  }
}

}  // namespace kf
