import type { Migration } from './migration.js';

export const migration: Migration = {
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
};
