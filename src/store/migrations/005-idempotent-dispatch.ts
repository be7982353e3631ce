import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 5,
  name: 'idempotent dispatch',
  sql: `
-- DX07: a dispatch request id, reserved with the work it starts; its result replayed byte for byte.
CREATE TABLE dispatch_requests (
  request_id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL,
  stage TEXT NOT NULL,
  envelope_hash TEXT NOT NULL,
  driver TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('in_flight', 'completed', 'failed')),
  status INTEGER,
  response TEXT,
  detail TEXT,
  attempts INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX dispatch_requests_in_flight ON dispatch_requests (run_id) WHERE state = 'in_flight';

-- The driver's tenure: a lease token that stays the same across renewals, so an envelope can name it.
ALTER TABLE deployment_runs ADD COLUMN lease_token TEXT;

-- Named contention points (DX12): an ownership freeze in progress, a start in a project.
CREATE TABLE work_locks (
  name TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  since INTEGER NOT NULL
);
`,
};
