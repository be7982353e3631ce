// Migrations of what must hold across processes and lost deliveries: who holds
// a reservation or a close-out claim, how long a plan execution lives, which
// qa: labels have been handled. Appended to MIGRATIONS.

export const LEASE_MIGRATIONS: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 8,
    name: 'process leases',
    sql: `
-- TR12: every yoke process (the server, the database door) holds a lease it renews; what it holds lapses with it.
CREATE TABLE processes (
  id TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  pid INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
  alive_until INTEGER NOT NULL
);

-- The process that reserved a dispatch, and the one running a close-out: nothing else may fail or take them while it lives.
ALTER TABLE dispatch_requests ADD COLUMN owner TEXT;
ALTER TABLE closeouts ADD COLUMN owner TEXT;

-- A plan execution lives while its runner renews it; the same start (idempotency key) opens it once.
ALTER TABLE plan_executions ADD COLUMN lease_until INTEGER;
ALTER TABLE plan_executions ADD COLUMN request_key TEXT;
UPDATE plan_executions SET lease_until = started_at + 120000 WHERE state = 'live';
CREATE UNIQUE INDEX plan_executions_request ON plan_executions (run_id, request_key) WHERE request_key IS NOT NULL;

-- Every stage done, some accepted member still owed its close-out: the run is closing, not succeeded.
ALTER TABLE deployment_runs ADD COLUMN closing_since INTEGER;
`,
  },
  {
    version: 9,
    name: 'qa label reconciliation',
    sql: `
-- A qa: label seen on an issue, by its webhook or by the poll, whichever came first: it is handled once.
CREATE TABLE qa_label_marks (
  repo TEXT NOT NULL,
  issue_number INTEGER NOT NULL,
  label TEXT NOT NULL,
  outcome TEXT,
  marked_at INTEGER NOT NULL,
  PRIMARY KEY (repo, issue_number, label)
);

-- How far the poll has read each repository's issue updates.
CREATE TABLE qa_label_cursors (
  repo TEXT PRIMARY KEY,
  read_until INTEGER NOT NULL,
  read_at INTEGER NOT NULL
);
`,
  },
  {
    version: 10,
    name: 'failed run notices',
    sql: `
-- The one comment on an issue (AFK) or claim PR (fix) that says its last run failed: edited for the next attempt.
CREATE TABLE run_notices (
  repo TEXT NOT NULL,
  thread INTEGER NOT NULL,
  comment_id INTEGER NOT NULL,
  run_id TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (repo, thread)
);
`,
  },
  {
    version: 11,
    name: 'what the last read of a repository found',
    sql: `
-- The settings and open claim PRs the last pass read, as JSON: what the repository page shows, from any process.
ALTER TABLE repos ADD COLUMN last_read TEXT;
`,
  },
  {
    version: 12,
    name: 'one leader for the ticks',
    sql: `
-- The one process that runs the fleet's ticks (the scheduler, the reaper, the close-out sweep, the notice
-- redelivery): a lease it renews, taken over by another process only once it lapses.
CREATE TABLE leaders (
  role TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  lease_until INTEGER NOT NULL,
  since INTEGER NOT NULL
);
`,
  },
];
