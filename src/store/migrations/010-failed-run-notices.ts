import type { Migration } from './migration.js';

export const migration: Migration = {
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
};
