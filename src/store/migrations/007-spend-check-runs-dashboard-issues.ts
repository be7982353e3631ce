import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 7,
  name: 'spend, check runs, dashboard issues',
  sql: `
-- What a run reported it cost, with its result; totals are per repository and UTC day of the report.
ALTER TABLE runs ADD COLUMN reported_at INTEGER;
ALTER TABLE runs ADD COLUMN cost_usd REAL;
ALTER TABLE runs ADD COLUMN input_tokens INTEGER;
ALTER TABLE runs ADD COLUMN output_tokens INTEGER;
-- The title of the issue or PR a run works on, as the pass read it when it launched the run.
ALTER TABLE runs ADD COLUMN title TEXT;
CREATE INDEX runs_spend ON runs (repo, reported_at) WHERE cost_usd IS NOT NULL;

-- The yoke/lander check run of each claim PR head, and what yoke last wrote to it.
CREATE TABLE check_runs (
  repo TEXT NOT NULL,
  pr_number INTEGER NOT NULL,
  head_sha TEXT NOT NULL,
  check_run_id INTEGER NOT NULL,
  written TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (repo, pr_number, head_sha)
);

-- Each repository's dashboard issue (yoke:control) and a digest of the body yoke last wrote.
CREATE TABLE dashboard_issues (
  repo TEXT PRIMARY KEY,
  issue_number INTEGER NOT NULL,
  body_digest TEXT NOT NULL,
  written_at INTEGER NOT NULL
);
`,
};
