#include "store/postgres/postgres_store.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>

#include "core/codec.hpp"
#include "core/input_error.hpp"
#include "store/postgres/pg_connection.hpp"
#include "store/postgres/run_lease.hpp"
#include "store/rows.hpp"
#include "store/schema.hpp"

namespace kf {

namespace {

std::string Int(long long v) {
  return std::to_string(v);
}

std::string Real(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return fmt::format("{}", v);  // the shortest text that reads back as the same double
}

// Any two-key advisory lock: one migrator at a time (run leases use the one-key space).
constexpr const char* kMigrationLock = "SELECT pg_advisory_xact_lock(1801873779, 1)";

constexpr const char* kRunColumns = "SELECT name, task, device, settings, created_at FROM runs";
RunInfo RunFrom(const PgResult& r, int row) {
  RunInfo run;
  run.name = r.text(row, 0);
  run.task = r.text(row, 1);
  run.device = r.text(row, 2);
  run.settings = nlohmann::json::parse(r.text(row, 3), nullptr, false);
  run.created_at = r.text(row, 4);
  return run;
}

// "Now" on the server's clock, in StoreTimestamp's form: workers' hosts may disagree about the
// time, the server is the one clock they share.
constexpr const char* kServerNow =
    "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')";

// A worker's row (the heartbeat's age on the server's clock, as its stamp).
constexpr const char* kWorkerColumns =
    "SELECT id, host, role, pid, devices, queue, state, jobs_done, info, started_at, "
    "heartbeat_at, EXTRACT(EPOCH FROM now() - heartbeat_at::timestamptz)::double precision "
    "FROM workers";
WorkerRecord WorkerFrom(const PgResult& r, int row) {
  WorkerRecord w;
  w.id = r.text(row, 0);
  w.host = r.text(row, 1);
  w.role = r.text(row, 2);
  w.pid = r.int64(row, 3);
  w.devices = nlohmann::json::parse(r.text(row, 4));
  w.queue = r.text(row, 5);
  w.state = r.text(row, 6);
  w.jobs_done = r.int64(row, 7);
  w.info = nlohmann::json::parse(r.text(row, 8));
  w.started_at = r.text(row, 9);
  w.heartbeat_at = r.text(row, 10);
  w.heartbeat_age_s = r.real(row, 11);
  return w;
}

class PostgresStore : public Store {
 public:
  PostgresStore(const std::string& url, const std::string& printable, bool must_exist)
      : conn_(url, printable) {
    if (must_exist && conn_.Exec("SELECT to_regclass('schema_version') IS NULL").boolean(0, 0)) {
      throw InputError(printable, 0, "--store", "no kfoundry store in this database");
    }
    // A commit returns once it is flushed (a result is acked after its write returns), even on a
    // server configured to answer before.
    if (conn_.Exec("SELECT current_setting('synchronous_commit') = 'off'").boolean(0, 0))
      conn_.Exec("SET synchronous_commit = on");
    Migrate();
  }

  int schema_version() const override { return version_; }

  RunInfo OpenRun(const RunInfo& wanted) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    TakeRunLease(conn_, wanted.name);
    try {
      PgTransaction tx(conn_);
      if (std::optional<RunInfo> existing = FindRun(wanted.name)) {
        if (existing->task != wanted.task || existing->device != wanted.device) {
          throw InputError(
              conn_.printable(), 0, "run " + wanted.name,
              fmt::format("exists for task '{}' on '{}', not '{}' on '{}'", existing->task,
                          existing->device, wanted.task, wanted.device));
        }
        return *existing;
      }
      RunInfo run = wanted;
      run.created_at = StoreTimestamp();
      conn_.Exec(
          "INSERT INTO runs (name, task, device, settings, created_at) VALUES ($1, $2, $3, $4, $5)",
          {run.name, run.task, run.device, run.settings.dump(), run.created_at});
      tx.commit();
      return run;
    } catch (...) {
      ReleaseRunLease(conn_, wanted.name);
      throw;
    }
  }

  std::optional<RunInfo> FindRun(const std::string& name) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    PgResult r = conn_.Exec(std::string(kRunColumns) + " WHERE name = $1", {name});
    if (r.rows() == 0) return std::nullopt;
    return RunFrom(r, 0);
  }

  std::vector<RunInfo> Runs() override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    PgResult r = conn_.Exec(std::string(kRunColumns) + " ORDER BY created_at, name");
    std::vector<RunInfo> out;
    for (int i = 0; i < r.rows(); ++i) out.push_back(RunFrom(r, i));
    return out;
  }

  RunStats Stats(const std::string& run) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    PgResult r = conn_.Exec(
        "SELECT (SELECT COUNT(*) FROM evaluations WHERE run = $1), "
        "(SELECT COALESCE(MAX(created_at), '') FROM evaluations WHERE run = $1), "
        "(SELECT COUNT(*) FROM proposals WHERE run = $1), "
        "(SELECT COALESCE(MAX(created_at), '') FROM events WHERE run = $1 AND kind = 'finish')",
        {run});
    RunStats s;
    s.evaluations = r.int64(0, 0);
    s.last_evaluation_at = r.text(0, 1);
    s.proposals = r.int64(0, 2);
    s.finished_at = r.text(0, 3);
    return s;
  }

  std::string RunVersion(const std::string& run) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    PgResult r = conn_.Exec(
        "SELECT (SELECT COALESCE(MAX(seq), 0) FROM evaluations WHERE run = $1), "
        "(SELECT COUNT(*)::text || '.' || COALESCE(MAX(updated_at), '') FROM proposals "
        "WHERE run = $1), (SELECT COUNT(*) FROM events WHERE run = $1)",
        {run});
    return fmt::format("{}:{}:{}", r.text(0, 0), r.text(0, 1), r.text(0, 2));
  }

  bool PutKernel(const Kernel& kernel) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    PgTransaction tx(conn_);
    bool added = InsertKernel(kernel);
    tx.commit();
    return added;
  }

  std::optional<Kernel> FindKernel(const std::string& kernel_id) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    PgResult r = conn_.Exec("SELECT path, source FROM kernels WHERE id = $1", {kernel_id});
    if (r.rows() == 0) return std::nullopt;
    return ParseKernel(r.text(0, 0), r.text(0, 1));
  }

  // A batch is a few statements whatever its size (rows as one JSON parameter), so one
  // transaction of many verdicts costs little more than one.
  std::vector<bool> PutEvaluations(const std::string& run,
                                   const std::vector<EvaluationWrite>& writes) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    {
      PgTransaction tx(conn_);
      LockRun(run);
      InsertKernelsAndCandidates(writes);
      if (std::optional<std::vector<bool>> added = InsertEvaluations(run, writes)) {
        tx.commit();
        return *added;
      }
    }  // rolled back: a key of the batch was being written for another run at the same moment
    PgTransaction tx(conn_);
    LockRun(run);
    InsertKernelsAndCandidates(writes);
    std::vector<bool> added;
    for (const EvaluationWrite& w : writes)
      added.push_back(InsertEvaluations(run, {w})->front());  // one row: no hole
    tx.commit();
    return added;
  }

  std::optional<Evaluation> FindEvaluation(const std::string& key) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    PgResult r = conn_.Exec("SELECT verdict FROM evaluations WHERE key = $1", {key});
    if (r.rows() == 0) return std::nullopt;
    return EvaluationFromJson(nlohmann::json::parse(r.text(0, 0)));
  }

  std::vector<StoredEvaluation> RunEvaluations(const std::string& run) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    PgResult r = conn_.Exec(
        "SELECT e.seq, e.key, e.candidate_id, c.kernel_id, c.config, e.verdict, e.proposal, "
        "e.purpose, e.created_at FROM evaluations e JOIN candidates c ON c.id = e.candidate_id "
        "WHERE e.run = $1 ORDER BY e.seq",
        {run});
    std::vector<StoredEvaluation> out;
    for (int i = 0; i < r.rows(); ++i) {
      StoredEvaluation s;
      s.seq = r.int64(i, 0);
      s.key = r.text(i, 1);
      s.candidate_id = r.text(i, 2);
      s.kernel_id = r.text(i, 3);
      s.config = ConfigFromJson(nlohmann::json::parse(r.text(i, 4)));
      s.evaluation = EvaluationFromJson(nlohmann::json::parse(r.text(i, 5)));
      s.proposal = r.null(i, 6) ? -1 : static_cast<int>(r.int64(i, 6));
      s.purpose = r.text(i, 7);
      s.created_at = r.text(i, 8);
      out.push_back(std::move(s));
    }
    return out;
  }

  void PutProposal(const std::string& run, const ProposalRecord& p) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    PgTransaction tx(conn_);
    LockRun(run);
    if (p.proposal) InsertKernel(p.proposal->kernel);
    std::string now = StoreTimestamp();
    conn_.Exec(
        "INSERT INTO proposals (run, idx, state, request, kernel_id, proposal, outcome, done_seq, "
        "created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, CASE WHEN $8::boolean THEN "
        "(SELECT COALESCE(MAX(done_seq), 0) + 1 FROM proposals WHERE run = $1) ELSE 0 END, $9, "
        "$9) ON CONFLICT (run, idx) DO UPDATE SET state = excluded.state, request = "
        "excluded.request, kernel_id = excluded.kernel_id, proposal = excluded.proposal, outcome = "
        "excluded.outcome, updated_at = excluded.updated_at, done_seq = CASE WHEN "
        "proposals.done_seq = 0 AND $8::boolean THEN (SELECT COALESCE(MAX(done_seq), 0) + 1 FROM "
        "proposals WHERE run = $1) ELSE proposals.done_seq END",
        {run, Int(p.index), std::string(ProposalStateName(p.state)), p.request.dump(),
         p.proposal ? PgParam(KernelId(p.proposal->kernel)) : std::nullopt,
         p.proposal ? PgParam(ProposalColumn(*p.proposal)) : std::nullopt, p.outcome.dump(),
         p.Final() ? "true" : "false", now});
    tx.commit();
  }

  std::vector<ProposalRecord> RunProposals(const std::string& run) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    PgResult r = conn_.Exec(
        "SELECT p.idx, p.state, p.request, p.proposal, p.outcome, p.done_seq, k.path, k.source "
        "FROM proposals p LEFT JOIN kernels k ON k.id = p.kernel_id WHERE p.run = $1 ORDER BY "
        "p.idx",
        {run});
    std::vector<ProposalRecord> out;
    for (int i = 0; i < r.rows(); ++i) {
      ProposalRecord p;
      p.index = static_cast<int>(r.int64(i, 0));
      p.state = ParseProposalState(r.text(i, 1)).value_or(ProposalState::kAbandoned);
      p.request = nlohmann::json::parse(r.text(i, 2));
      if (!r.null(i, 3) && !r.null(i, 6))
        p.proposal = ProposalFromColumns(r.text(i, 3), r.text(i, 6), r.text(i, 7));
      p.outcome = nlohmann::json::parse(r.text(i, 4));
      p.done_seq = r.int64(i, 5);
      out.push_back(std::move(p));
    }
    return out;
  }

  bool OfferArchiveCell(const std::string& run, const ArchiveEntry& entry) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    PgTransaction tx(conn_);
    PgResult r = conn_.Exec(
        "INSERT INTO archive (run, cell, candidate_id, speedup) VALUES ($1, $2, $3, $4) "
        "ON CONFLICT (run, cell) DO UPDATE SET candidate_id = excluded.candidate_id, "
        "speedup = excluded.speedup WHERE excluded.speedup > archive.speedup",
        {run, nlohmann::json(entry.cell).dump(), entry.candidate_id, Real(entry.speedup)});
    tx.commit();
    return r.affected() > 0;
  }

  std::vector<ArchiveEntry> Archive(const std::string& run) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    PgResult r = conn_.Exec(
        "SELECT cell, candidate_id, speedup FROM archive WHERE run = $1 ORDER BY cell", {run});
    std::vector<ArchiveEntry> out;
    for (int i = 0; i < r.rows(); ++i) {
      out.push_back({nlohmann::json::parse(r.text(i, 0)).get<std::vector<int>>(), r.text(i, 1),
                     r.real(i, 2)});
    }
    return out;
  }

  void PutPromptVersion(const std::string& run, const PromptVersionRecord& v) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    PgTransaction tx(conn_);
    conn_.Exec(
        "INSERT INTO prompt_versions (run, component, version, parent_version, made_by, text, "
        "stats, meta, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) "
        "ON CONFLICT (run, component, version) DO UPDATE SET stats = excluded.stats, "
        "updated_at = excluded.updated_at",
        {run, v.component, Int(v.version), Int(v.parent_version), v.made_by, v.text, v.stats.dump(),
         v.meta.dump(), StoreTimestamp()});
    tx.commit();
  }

  std::vector<PromptVersionRecord> RunPromptVersions(const std::string& run) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    PgResult r = conn_.Exec(
        "SELECT component, version, parent_version, made_by, text, stats, meta FROM "
        "prompt_versions WHERE run = $1 ORDER BY component, version",
        {run});
    std::vector<PromptVersionRecord> out;
    for (int i = 0; i < r.rows(); ++i) {
      PromptVersionRecord v;
      v.component = r.text(i, 0);
      v.version = static_cast<int>(r.int64(i, 1));
      v.parent_version = static_cast<int>(r.int64(i, 2));
      v.made_by = r.text(i, 3);
      v.text = r.text(i, 4);
      v.stats = nlohmann::json::parse(r.text(i, 5));
      v.meta = nlohmann::json::parse(r.text(i, 6));
      out.push_back(std::move(v));
    }
    return out;
  }

  void AddEvent(const std::string& run, const std::string& kind,
                const nlohmann::json& data) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    PgTransaction tx(conn_);
    conn_.Exec("INSERT INTO events (run, kind, data, created_at) VALUES ($1, $2, $3, $4)",
               {run, kind, data.dump(), StoreTimestamp()});
    tx.commit();
  }

  std::vector<nlohmann::json> Events(const std::string& run) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    PgResult r =
        conn_.Exec("SELECT kind, data, created_at FROM events WHERE run = $1 ORDER BY id", {run});
    std::vector<nlohmann::json> out;
    for (int i = 0; i < r.rows(); ++i) {
      out.push_back({{"kind", r.text(i, 0)},
                     {"data", nlohmann::json::parse(r.text(i, 1))},
                     {"at", r.text(i, 2)}});
    }
    return out;
  }

  void PutWorker(const WorkerRecord& w) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    conn_.Exec(fmt::format(
                   "INSERT INTO workers (id, host, role, pid, devices, queue, state, jobs_done, "
                   "info, started_at, heartbeat_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, "
                   "{0}, {0}) ON CONFLICT (id) DO UPDATE SET host = excluded.host, role = "
                   "excluded.role, pid = excluded.pid, devices = excluded.devices, queue = "
                   "excluded.queue, state = excluded.state, jobs_done = excluded.jobs_done, info = "
                   "excluded.info, heartbeat_at = excluded.heartbeat_at",
                   kServerNow),
               {w.id, w.host, w.role, Int(w.pid), w.devices.dump(), w.queue, w.state,
                Int(w.jobs_done), w.info.dump()});
  }

  std::vector<WorkerRecord> Workers() override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    PgResult r = conn_.Exec(std::string(kWorkerColumns) + " ORDER BY heartbeat_at DESC, id");
    std::vector<WorkerRecord> out;
    for (int i = 0; i < r.rows(); ++i) out.push_back(WorkerFrom(r, i));
    return out;
  }

  bool PutTaskBundle(const TaskBundle& bundle) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    return conn_
               .Exec(
                   "INSERT INTO task_bundles (id, name, files, bytes, created_at) VALUES ($1, "
                   "$2, $3, $4, $5) ON CONFLICT (id) DO NOTHING",
                   {bundle.id, bundle.name, TaskBundleFilesColumn(bundle),
                    Int(TaskBundleBytes(bundle)), StoreTimestamp()})
               .affected() > 0;
  }

  std::optional<TaskBundle> FindTaskBundle(const std::string& id) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    PgResult r = conn_.Exec("SELECT name, files FROM task_bundles WHERE id = $1", {id});
    if (r.rows() == 0) return std::nullopt;
    return TaskBundleFromColumns(id, r.text(0, 0), r.text(0, 1));
  }

  void CancelScope(const std::string& scope) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    conn_.Exec(fmt::format("INSERT INTO cancelled_scopes (scope, cancelled_at) VALUES ($1, {}) "
                           "ON CONFLICT (scope) DO NOTHING",
                           kServerNow),
               {scope});
  }

  bool ScopeCancelled(const std::string& scope) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    return conn_.Exec("SELECT 1 FROM cancelled_scopes WHERE scope = $1", {scope}).rows() > 0;
  }

 private:
  void Migrate() {
    PgTransaction tx(conn_);
    conn_.Exec(kMigrationLock);
    conn_.ExecScript("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
    PgResult r = conn_.Exec("SELECT MAX(version) FROM schema_version");
    version_ = r.null(0, 0) ? 0 : static_cast<int>(r.int64(0, 0));
    if (version_ > SchemaVersion()) {
      throw InputError(
          conn_.printable(), 0, "schema_version",
          fmt::format("the store has schema version {}, newer than this kfoundry knows ({})",
                      version_, SchemaVersion()));
    }
    for (int v = version_; v < SchemaVersion(); ++v) {
      conn_.ExecScript(Migrations()[static_cast<size_t>(v)].postgres);
      conn_.Exec("INSERT INTO schema_version (version) VALUES ($1)", {Int(v + 1)});
    }
    tx.commit();
    version_ = SchemaVersion();
  }

  // Appends to a run (its evaluations' seq, its proposals' done_seq) wait for each other here, so
  // each reads the order the previous one committed.
  void LockRun(const std::string& run) {
    conn_.Exec("SELECT 1 FROM runs WHERE name = $1 FOR UPDATE", {run});
  }

  // Kernels and candidates in key order: two writers of different runs that share them then wait
  // for each other in the same order, never in a cycle.
  void InsertKernelsAndCandidates(const std::vector<EvaluationWrite>& writes) {
    nlohmann::json kernels = nlohmann::json::array(), candidates = nlohmann::json::array();
    for (const EvaluationWrite& w : writes) {
      std::string kernel_id = KernelId(w.kernel);
      kernels.push_back({{"id", kernel_id},
                         {"path", w.kernel.path},
                         {"language", LanguageName(w.kernel.language)},
                         {"entry", w.kernel.EntryNames()},
                         {"source", w.kernel.source}});
      candidates.push_back({{"id", CandidateId(kernel_id, w.config)},
                            {"kernel_id", kernel_id},
                            {"config", ConfigToJson(w.config).dump()}});
    }
    conn_.Exec(
        "INSERT INTO kernels (id, path, language, entry, source) SELECT DISTINCT ON (id) * FROM "
        "json_to_recordset($1::json) AS t(id text, path text, language text, entry text, source "
        "text) ORDER BY id ON CONFLICT (id) DO NOTHING",
        {kernels.dump()});
    conn_.Exec(
        "INSERT INTO candidates (id, kernel_id, config) SELECT DISTINCT ON (id) * FROM "
        "json_to_recordset($1::json) AS t(id text, kernel_id text, config text) ORDER BY id ON "
        "CONFLICT (id) DO NOTHING",
        {candidates.dump()});
  }

  // The batch's new keys (the first of each, in the batch's order) numbered after the run's last;
  // whether each write was new. nullopt when a key was written elsewhere meanwhile (the numbers
  // would have a gap): the caller rolls back.
  std::optional<std::vector<bool>> InsertEvaluations(const std::string& run,
                                                     const std::vector<EvaluationWrite>& writes) {
    nlohmann::json rows = nlohmann::json::array();
    std::string now = StoreTimestamp();
    for (size_t n = 0; n < writes.size(); ++n) {
      const EvaluationWrite& w = writes[n];
      const Evaluation& ev = w.evaluation;
      rows.push_back(
          {{"n", n},
           {"key", w.key},
           {"candidate_id", CandidateId(KernelId(w.kernel), w.config)},
           {"status", StatusName(ev.status)},
           {"time_ms", ev.time ? nlohmann::json(Real(ev.time->median_ms)) : nlohmann::json()},
           {"verdict", EvaluationToJson(ev).dump()},
           {"created_at", now},
           {"proposal",
            w.purpose.proposal >= 0 ? nlohmann::json(w.purpose.proposal) : nlohmann::json()},
           {"purpose", w.purpose.purpose}});
    }
    PgResult r = conn_.Exec(
        "WITH base AS (SELECT COALESCE(MAX(seq), 0) AS seq FROM evaluations WHERE run = $2), "
        "fresh AS (SELECT DISTINCT ON (t.key) t.* FROM json_to_recordset($1::json) AS t(n "
        "int, key text, candidate_id text, status text, time_ms text, verdict text, created_at "
        "text, proposal int, purpose text) WHERE NOT EXISTS (SELECT 1 FROM evaluations e WHERE "
        "e.key = t.key) ORDER BY t.key, t.n) INSERT INTO evaluations (key, seq, run, candidate_id, "
        "status, time_ms, verdict, created_at, proposal, purpose) SELECT key, (SELECT seq FROM "
        "base) "
        "+ row_number() OVER (ORDER BY n), "
        "$2, candidate_id, status, time_ms::double precision, verdict, created_at, proposal, "
        "purpose FROM fresh ORDER BY n ON CONFLICT (key) DO NOTHING RETURNING key, seq, (SELECT "
        "seq "
        "FROM base)",
        {rows.dump(), run});
    std::map<std::string, long long> stored;
    for (int i = 0; i < r.rows(); ++i) {
      stored[r.text(i, 0)] = r.int64(i, 1);
      // What was stored must be numbered base+1 .. base+rows: a row that conflicted at the
      // insert (written meanwhile for another run) would leave a hole.
      if (r.int64(i, 1) - r.int64(i, 2) > r.rows()) return std::nullopt;
    }
    std::vector<bool> added;
    for (const EvaluationWrite& w : writes) added.push_back(stored.erase(w.key) > 0);
    return added;
  }

  bool InsertKernel(const Kernel& k) {
    return conn_
               .Exec(
                   "INSERT INTO kernels (id, path, language, entry, source) VALUES ($1, $2, $3, "
                   "$4, $5) ON CONFLICT (id) DO NOTHING",
                   {KernelId(k), k.path, std::string(LanguageName(k.language)), k.EntryNames(),
                    k.source})
               .affected() > 0;
  }

  std::recursive_mutex mutex_;  // one connection, callers on several threads (proposers)
  PgConnection conn_;
  int version_ = 0;
};

}  // namespace

std::unique_ptr<Store> OpenPostgresStore(const std::string& url, const std::string& printable,
                                         bool must_exist) {
  try {
    return std::make_unique<PostgresStore>(url, printable, must_exist);
  } catch (const PgError& e) {
    throw InputError(printable, 0, "store", e.detail());
  }
}

}  // namespace kf
