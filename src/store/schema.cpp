#include "store/schema.hpp"

namespace kf {

namespace {

// The dialects differ only in types: SQLite's REAL is 8 bytes (PostgreSQL's DOUBLE PRECISION; its
// REAL is 4), INTEGER is 8 bytes (BIGINT where a count may grow), and an autoincrement key is a
// BIGSERIAL. Timestamps are the stores' own ISO text in both, JSON is text in both.
constexpr Migration kMigrations[] = {
    // 1: runs, kernels, candidates, evaluations, archive cells, events.
    {R"(
CREATE TABLE runs (
  name TEXT PRIMARY KEY,
  task TEXT NOT NULL,
  device TEXT NOT NULL,
  settings TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE kernels (
  id TEXT PRIMARY KEY,
  path TEXT NOT NULL,
  language TEXT NOT NULL,
  entry TEXT NOT NULL,
  source TEXT NOT NULL
);
CREATE TABLE candidates (
  id TEXT PRIMARY KEY,
  kernel_id TEXT NOT NULL REFERENCES kernels(id),
  config TEXT NOT NULL
);
CREATE TABLE evaluations (
  key TEXT PRIMARY KEY,
  seq INTEGER NOT NULL,
  run TEXT NOT NULL REFERENCES runs(name),
  candidate_id TEXT NOT NULL REFERENCES candidates(id),
  status TEXT NOT NULL,
  time_ms REAL,
  verdict TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX evaluations_by_run ON evaluations(run, seq);
CREATE TABLE archive (
  run TEXT NOT NULL REFERENCES runs(name),
  cell TEXT NOT NULL,
  candidate_id TEXT NOT NULL REFERENCES candidates(id),
  speedup REAL NOT NULL,
  PRIMARY KEY (run, cell)
);
CREATE TABLE events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run TEXT NOT NULL,
  kind TEXT NOT NULL,
  data TEXT NOT NULL,
  created_at TEXT NOT NULL
);
)",
     R"(
CREATE TABLE runs (
  name TEXT PRIMARY KEY,
  task TEXT NOT NULL,
  device TEXT NOT NULL,
  settings TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE kernels (
  id TEXT PRIMARY KEY,
  path TEXT NOT NULL,
  language TEXT NOT NULL,
  entry TEXT NOT NULL,
  source TEXT NOT NULL
);
CREATE TABLE candidates (
  id TEXT PRIMARY KEY,
  kernel_id TEXT NOT NULL REFERENCES kernels(id),
  config TEXT NOT NULL
);
CREATE TABLE evaluations (
  key TEXT PRIMARY KEY,
  seq BIGINT NOT NULL,
  run TEXT NOT NULL REFERENCES runs(name),
  candidate_id TEXT NOT NULL REFERENCES candidates(id),
  status TEXT NOT NULL,
  time_ms DOUBLE PRECISION,
  verdict TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX evaluations_by_run ON evaluations(run, seq);
CREATE TABLE archive (
  run TEXT NOT NULL REFERENCES runs(name),
  cell TEXT NOT NULL,
  candidate_id TEXT NOT NULL REFERENCES candidates(id),
  speedup DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (run, cell)
);
CREATE TABLE events (
  id BIGSERIAL PRIMARY KEY,
  run TEXT NOT NULL,
  kind TEXT NOT NULL,
  data TEXT NOT NULL,
  created_at TEXT NOT NULL
);
)"},
    // 2: proposals as they happen (a resumed run rebuilds its state from them), and which
    // proposal or re-verification each evaluation belongs to.
    {R"(
ALTER TABLE evaluations ADD COLUMN proposal INTEGER;
ALTER TABLE evaluations ADD COLUMN purpose TEXT NOT NULL DEFAULT 'search';
CREATE TABLE proposals (
  run TEXT NOT NULL REFERENCES runs(name),
  idx INTEGER NOT NULL,
  state TEXT NOT NULL,
  request TEXT NOT NULL,
  kernel_id TEXT REFERENCES kernels(id),
  proposal TEXT,
  outcome TEXT NOT NULL,
  done_seq INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (run, idx)
);
)",
     R"(
ALTER TABLE evaluations ADD COLUMN proposal INTEGER;
ALTER TABLE evaluations ADD COLUMN purpose TEXT NOT NULL DEFAULT 'search';
CREATE TABLE proposals (
  run TEXT NOT NULL REFERENCES runs(name),
  idx INTEGER NOT NULL,
  state TEXT NOT NULL,
  request TEXT NOT NULL,
  kernel_id TEXT REFERENCES kernels(id),
  proposal TEXT,
  outcome TEXT NOT NULL,
  done_seq BIGINT NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (run, idx)
);
)"},
    // 3: the versions of the prompt components a run used, with their statistics.
    {R"(
CREATE TABLE prompt_versions (
  run TEXT NOT NULL REFERENCES runs(name),
  component TEXT NOT NULL,
  version INTEGER NOT NULL,
  parent_version INTEGER NOT NULL,
  made_by TEXT NOT NULL,
  text TEXT NOT NULL,
  stats TEXT NOT NULL,
  meta TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (run, component, version)
);
)",
     R"(
CREATE TABLE prompt_versions (
  run TEXT NOT NULL REFERENCES runs(name),
  component TEXT NOT NULL,
  version INTEGER NOT NULL,
  parent_version INTEGER NOT NULL,
  made_by TEXT NOT NULL,
  text TEXT NOT NULL,
  stats TEXT NOT NULL,
  meta TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (run, component, version)
);
)"},
    // 4: the distributed roles' workers as their last heartbeats left them, and the task folders
    // they fetch (bundles: files as base64 in JSON).
    {R"(
CREATE TABLE workers (
  id TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  role TEXT NOT NULL,
  pid INTEGER NOT NULL,
  devices TEXT NOT NULL,
  queue TEXT NOT NULL,
  state TEXT NOT NULL,
  jobs_done INTEGER NOT NULL,
  info TEXT NOT NULL,
  started_at TEXT NOT NULL,
  heartbeat_at TEXT NOT NULL
);
CREATE TABLE task_bundles (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  files TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  created_at TEXT NOT NULL
);
)",
     R"(
CREATE TABLE workers (
  id TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  role TEXT NOT NULL,
  pid BIGINT NOT NULL,
  devices TEXT NOT NULL,
  queue TEXT NOT NULL,
  state TEXT NOT NULL,
  jobs_done BIGINT NOT NULL,
  info TEXT NOT NULL,
  started_at TEXT NOT NULL,
  heartbeat_at TEXT NOT NULL
);
CREATE TABLE task_bundles (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  files TEXT NOT NULL,
  bytes BIGINT NOT NULL,
  created_at TEXT NOT NULL
);
)"},
    // 5: the job scopes a coordinator cancelled (RemoteJudge::CancelPending): workers skip a job
    // of one instead of running it.
    {R"(
CREATE TABLE cancelled_scopes (
  scope TEXT PRIMARY KEY,
  cancelled_at TEXT NOT NULL
);
)",
     R"(
CREATE TABLE cancelled_scopes (
  scope TEXT PRIMARY KEY,
  cancelled_at TEXT NOT NULL
);
)"},
};

}  // namespace

std::span<const Migration> Migrations() {
  return kMigrations;
}

int SchemaVersion() {
  return static_cast<int>(std::size(kMigrations));
}

}  // namespace kf
