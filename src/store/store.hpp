#pragma once
// The Store: everything a run produces — the run, kernels, candidates, evaluations, proposals,
// archive cells, prompt component versions and events — and what the distributed roles share:
// workers' heartbeats and task bundles. Everything is keyed so that every write is idempotent: a
// kernel by the hash of its source, a candidate by kernel and configuration, an evaluation by
// candidate, device and evaluation settings, a proposal by its run and index. A redelivered job or
// a resumed run never duplicates a result. A write returns once it is durable (committed), so a
// result may be acknowledged when its write returns. Safe to call from several threads.
// Implementations: SQLite (sqlite/, the default), PostgreSQL (postgres/); docs/store.md.

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/evaluation.hpp"
#include "core/identity.hpp"
#include "core/kernel.hpp"
#include "core/proposal.hpp"
#include "core/task_bundle.hpp"

namespace kf {

struct RunInfo {
  std::string name, task, device;
  nlohmann::json settings = nlohmann::json::object();
  std::string created_at;  // filled by the store
};

// Why an evaluation was made: the search's (for one proposal; -1 for the baseline seed) or the
// final re-verification's.
struct EvaluationPurpose {
  int proposal = -1;
  std::string purpose = "search";  // "search" | "final"
};

// One verdict to store: what PutEvaluations takes, several in one transaction.
struct EvaluationWrite {
  Kernel kernel;
  Config config;
  std::string key;
  Evaluation evaluation;
  EvaluationPurpose purpose;
};

struct StoredEvaluation {
  long long seq = 0;  // order of insertion within the run
  std::string key, candidate_id, kernel_id;
  Config config;
  Evaluation evaluation;
  int proposal = -1;
  std::string purpose = "search";
  std::string created_at;  // when it was stored: "2026-12-04T10:15:00.123Z" (older: no millis)
};

// One version of a prompt component a run used: the library's, or one the meta step wrote from
// its parent version; the statistics are updated as the proposals that used it are graded.
struct PromptVersionRecord {
  std::string component;  // the component's id
  int version = 1, parent_version = 0;
  std::string made_by = "library";  // "library" | "meta"
  std::string text;
  nlohmann::json stats = nlohmann::json::object();  // uses, improvements, credit, gain
  nlohmann::json meta = nlohmann::json::object();   // how the meta step made it (prompt, reply)
};

// How far a run has got, in a few cheap queries.
struct RunStats {
  long long evaluations = 0, proposals = 0;
  std::string last_evaluation_at;  // "" when none
  std::string finished_at;         // the last "finish" event's time; "" when none
  // It finished after its last evaluation (a resumed run that is going again has not).
  bool Finished() const { return !finished_at.empty() && finished_at >= last_evaluation_at; }
};

struct ArchiveEntry {
  std::vector<int> cell;
  std::string candidate_id;
  double speedup = 0;
};

// A worker process of the distributed roles as its last heartbeat left it (`kfoundry status`).
struct WorkerRecord {
  std::string id;          // unique per process: "HOST:PID:ROLE"
  std::string host, role;  // role: "run" | "build" | "propose"
  long long pid = 0;
  nlohmann::json devices = nlohmann::json::array();  // what it serves (DeviceInfoToJson each)
  std::string queue;                                 // the queue it consumes
  std::string state = "running";                     // "running" | "draining" | "stopped"
  long long jobs_done = 0;
  nlohmann::json info = nlohmann::json::object();  // anything else (bandwidth per device, version)
  std::string started_at, heartbeat_at;            // stamped by the store
  double heartbeat_age_s = 0;                      // filled on read: seconds since heartbeat_at
};

class Store {
 public:
  virtual ~Store() = default;
  virtual int schema_version() const = 0;

  // Creates the run, or returns the stored one of that name (to resume it), and makes this store
  // object the run's one writer until it is destroyed where the store is shared (PostgreSQL: a
  // lease). Throws InputError if a run of that name exists for another task or device, or if
  // another writer holds the run (the message names it: host, pid, since when).
  virtual RunInfo OpenRun(const RunInfo& wanted) = 0;
  virtual std::optional<RunInfo> FindRun(const std::string& name) = 0;
  // Every run, oldest first.
  virtual std::vector<RunInfo> Runs() = 0;
  // A token that changes whenever an evaluation, a proposal's state or an event of the run is
  // stored (cheap: for a dashboard that polls).
  virtual std::string RunVersion(const std::string& run) = 0;
  virtual RunStats Stats(const std::string& run) = 0;

  // Each returns false when the record was already there (nothing is written twice).
  virtual bool PutKernel(const Kernel& kernel) = 0;
  virtual std::optional<Kernel> FindKernel(const std::string& kernel_id) = 0;
  // Several verdicts in one transaction (one durable commit for the batch); per write, whether it
  // was new. A key already stored keeps its first verdict and its place in the run's order.
  virtual std::vector<bool> PutEvaluations(const std::string& run,
                                           const std::vector<EvaluationWrite>& writes) = 0;
  bool PutEvaluation(const std::string& run, const Kernel& kernel, const Config& config,
                     const std::string& key, const Evaluation& evaluation,
                     const EvaluationPurpose& purpose = {}) {
    return PutEvaluations(run, {{kernel, config, key, evaluation, purpose}}).front();
  }
  virtual std::optional<Evaluation> FindEvaluation(const std::string& key) = 0;
  virtual std::vector<StoredEvaluation> RunEvaluations(const std::string& run) = 0;

  // Writes the proposal's current state (insert or replace by run and index); a proposal that
  // reaches a final state gets the next completion number.
  virtual void PutProposal(const std::string& run, const ProposalRecord& record) = 0;
  virtual std::vector<ProposalRecord> RunProposals(const std::string& run) = 0;

  // Keeps the candidate with the higher speedup for the cell; true when it replaced or filled it.
  virtual bool OfferArchiveCell(const std::string& run, const ArchiveEntry& entry) = 0;
  virtual std::vector<ArchiveEntry> Archive(const std::string& run) = 0;

  // Inserts a version, or updates the statistics of one already stored (by run, component and
  // version: a version's text never changes).
  virtual void PutPromptVersion(const std::string& run, const PromptVersionRecord& version) = 0;
  virtual std::vector<PromptVersionRecord> RunPromptVersions(const std::string& run) = 0;

  virtual void AddEvent(const std::string& run, const std::string& kind,
                        const nlohmann::json& data) = 0;
  virtual std::vector<nlohmann::json> Events(const std::string& run) = 0;

  // Inserts or updates the worker's row by id, stamping heartbeat_at now (started_at on insert).
  // "Now" is the clock of the store: the server's for PostgreSQL (workers' hosts may disagree),
  // this host's for SQLite; heartbeat_age_s is measured on the same clock.
  virtual void PutWorker(const WorkerRecord& worker) = 0;
  // Every worker, the most recent heartbeat first, heartbeat_age_s filled.
  virtual std::vector<WorkerRecord> Workers() = 0;

  // Stored once under its id (the id is not checked against the files here: UnpackTaskBundle
  // does, where the folder is used); false when it was there already.
  virtual bool PutTaskBundle(const TaskBundle& bundle) = 0;
  virtual std::optional<TaskBundle> FindTaskBundle(const std::string& id) = 0;

  // Job scopes a coordinator cancelled: a scope names the jobs one remote judge sent between two
  // cancellations (dist/remote_judge.hpp); a worker skips a job whose scope is cancelled.
  virtual void CancelScope(const std::string& scope) = 0;
  virtual bool ScopeCancelled(const std::string& scope) = 0;
};

// "sqlite:PATH" (also a bare path) or "postgresql://[USER@]HOST[:PORT]/DB" (also postgres://;
// the password from PGPASSWORD or ~/.pgpass: a URL with one is refused). Throws InputError for an
// unknown scheme, an unusable file or server, and, with `must_exist`, for a store that is not there
// (a reader never creates an empty one).
std::unique_ptr<Store> OpenStore(const std::string& url, bool must_exist = false);

// The URL as it may be printed or logged: a password in it (user:PASSWORD@, password=...) becomes
// "***". Every message that names a store uses this.
std::string RedactStoreUrl(const std::string& url);

}  // namespace kf
