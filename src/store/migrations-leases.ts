// Migrations of what must hold across processes and lost deliveries: who holds
// a reservation or a close-out claim, how long a plan execution lives, which
// qa: labels have been handled. Appended to MIGRATIONS.

export const LEASE_MIGRATIONS: readonly { version: number; name: string; sql: string; postgres?: string }[] = [
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
  {
    version: 13,
    name: 'the locked launch in one round trip',
    // SQLite records a launch in a transaction of its own (RunStore.recordLaunch): nothing to create there.
    sql: '-- PostgreSQL only: the locked launch as one function call.',
    postgres: `
-- SP06 on PostgreSQL in one round trip: the write lock every write transaction takes first (postgres-sql.ts),
-- then, in a statement whose snapshot is taken after it, the count, the checks and the record, as
-- RunStore.insertIfRoom does them inside SQLite's transaction; then the request it serves is consumed.
-- Returns the live count it recorded, the run included, or NULL when it recorded nothing.
CREATE FUNCTION yoke_record_launch(
  p_id TEXT, p_repo TEXT, p_kind TEXT, p_subject TEXT, p_issue BIGINT, p_pr BIGINT, p_head TEXT,
  p_launched BIGINT, p_deadline BIGINT, p_launcher TEXT, p_ref TEXT, p_secret TEXT, p_cap_at BIGINT,
  p_title TEXT, p_cap BIGINT, p_pausable BIGINT, p_request BIGINT
) RETURNS BIGINT VOLATILE LANGUAGE plpgsql AS $fn$
DECLARE
  recorded BIGINT;
BEGIN
  PERFORM pg_advisory_xact_lock(7079000);
  INSERT INTO runs (id, repo, kind, subject, issue_number, pr_number, head_sha, status, launched_at,
    budget_deadline, launcher, launcher_ref, secret_hash, cap_at_launch, live_at_launch, title)
  SELECT p_id, p_repo, p_kind, p_subject, p_issue, p_pr, p_head, 'live', p_launched, p_deadline, p_launcher, p_ref,
    p_secret, p_cap_at, live.n + 1, p_title
  FROM (SELECT COUNT(*) AS n FROM runs WHERE status = 'live') live
  WHERE live.n < p_cap
    AND NOT EXISTS (SELECT 1 FROM runs WHERE repo = p_repo AND subject = p_subject AND status = 'live')
    AND NOT (p_pausable = 1 AND EXISTS (SELECT 1 FROM repos WHERE full_name = p_repo AND paused_since IS NOT NULL))
  RETURNING live_at_launch INTO recorded;
  IF recorded IS NOT NULL AND p_request IS NOT NULL THEN
    UPDATE requests SET consumed_by_run = p_id WHERE id = p_request AND consumed_by_run IS NULL;
  END IF;
  RETURN recorded;
END
$fn$;
`,
  },
];
