import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 4,
  name: 'notices and close-out',
  sql: `
-- A notice: who is told what, where, and what became of it (QA20-QA23).
CREATE TABLE notices (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL,
  stage TEXT NOT NULL,
  subject TEXT NOT NULL,
  audience TEXT NOT NULL CHECK (audience IN ('holder', 'driver')),
  recipient_kind TEXT NOT NULL CHECK (recipient_kind IN ('holder', 'driver', 'creator', 'steering')),
  recipient TEXT NOT NULL,
  wait_key TEXT NOT NULL,
  thread INTEGER NOT NULL,
  comment_id INTEGER,
  state TEXT NOT NULL CHECK (state IN ('pending', 'posted', 'edited', 'withdrawn', 'cancelled', 'failed', 'answered', 'resolved', 'superseded')),
  body_hash TEXT,
  detail TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX notices_by_run ON notices (run_id, stage, subject);

-- DX01-DX06: one close-out per member of a run.
CREATE TABLE closeouts (
  run_id TEXT NOT NULL,
  issue_number INTEGER NOT NULL,
  stage TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('running', 'closed', 'refused')),
  refusal TEXT,
  notice_comment_id INTEGER,
  attempts INTEGER NOT NULL DEFAULT 1,
  started_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, issue_number)
);

-- A plan execution: someone running a plan's cases against a stage.
CREATE TABLE plan_executions (
  id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL,
  stage TEXT NOT NULL,
  subject TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('qa-stage', 'deployment-stage')),
  state TEXT NOT NULL CHECK (state IN ('live', 'ended')),
  started_at INTEGER NOT NULL,
  ended_at INTEGER
);
CREATE INDEX plan_executions_live ON plan_executions (run_id, stage) WHERE state = 'live';

-- What the last gate check left waiting, for the fleet report (QA23).
ALTER TABLE deployment_runs ADD COLUMN waits TEXT;
`,
};
