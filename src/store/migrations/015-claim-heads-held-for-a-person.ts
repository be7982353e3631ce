import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 15,
  name: 'claim heads held for a person',
  sql: `
-- TR14: a claim PR head the lander accepted that changes a protected path; it merges only after a
-- writer who is not its author approves that head. One comment per PR says so (carried to newer heads).
CREATE TABLE protected_holds (
  repo TEXT NOT NULL,
  pr_number INTEGER NOT NULL,
  head_sha TEXT NOT NULL,
  files TEXT NOT NULL,
  comment_id INTEGER,
  approved_by TEXT,
  recorded_at INTEGER NOT NULL,
  PRIMARY KEY (repo, pr_number, head_sha)
);

-- TR24: an AFK issue's body as it was when yoke first saw its label, and who applied the label; a body
-- edited since is not worked until a writer's /yoke start (or a new label) confirms it.
CREATE TABLE afk_labels (
  repo TEXT NOT NULL,
  issue_number INTEGER NOT NULL,
  body_digest TEXT NOT NULL,
  labelled_by TEXT,
  recorded_at INTEGER NOT NULL,
  notified_digest TEXT,
  PRIMARY KEY (repo, issue_number)
);
`,
};
