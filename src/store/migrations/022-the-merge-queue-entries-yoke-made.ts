import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 22,
  name: 'the merge queue entries yoke made',
  sql: `
-- LD04: where a ruleset requires GitHub's merge queue, yoke adds an accepted claim PR to it rather than merging.
-- One row per (PR, head, accept): the lander run whose accept it followed, and what GitHub said (queued, or
-- refused with its message). An accept is enqueued once: a PR the queue let go (its group failed, or timed
-- out) is queued again only on a newer accept.
CREATE TABLE enqueues (
  repo TEXT NOT NULL,
  pr_number INTEGER NOT NULL,
  head_sha TEXT NOT NULL,
  run_id TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued', 'refused')),
  detail TEXT,
  at INTEGER NOT NULL,
  PRIMARY KEY (repo, pr_number, head_sha, run_id)
);
`,
};
