import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 14,
  name: 'github deployments, protection reviews',
  sql: `
-- DP01: every start of a deploy stage is one GitHub deployment at the run's pinned commit; its state mirrors the stage's.
CREATE TABLE stage_deployments (
  deployment_id INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES deployment_runs (id),
  stage TEXT NOT NULL,
  environment TEXT NOT NULL,
  commit_sha TEXT NOT NULL,
  workflow TEXT,
  workflow_run_id INTEGER,
  state TEXT NOT NULL,
  log_url TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX stage_deployments_run ON stage_deployments (run_id, stage, created_at);

-- DP03: what yoke answered each deployment_protection_rule request (one per workflow run and environment), and why.
CREATE TABLE protection_reviews (
  repo TEXT NOT NULL,
  workflow_run_id INTEGER NOT NULL,
  environment TEXT NOT NULL,
  sha TEXT NOT NULL,
  decision TEXT NOT NULL,
  code TEXT NOT NULL,
  deployment_run TEXT,
  -- answered: GitHub took it; refused: GitHub had an answer already; unsent: GitHub could not be reached (sent again); left: for others.
  answer TEXT NOT NULL CHECK (answer IN ('answered', 'refused', 'unsent', 'left')),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (repo, workflow_run_id, environment)
);

-- DP05: what the last read of each gated stage's environment found (its rule missing makes the gate advisory only).
CREATE TABLE environment_checks (
  repo TEXT NOT NULL,
  stage TEXT NOT NULL,
  environment TEXT NOT NULL,
  code TEXT NOT NULL,
  app TEXT NOT NULL,
  checked_at INTEGER NOT NULL,
  PRIMARY KEY (repo, stage)
);
`,
};
