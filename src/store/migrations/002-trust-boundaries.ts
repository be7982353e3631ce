import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 2,
  name: 'trust boundaries',
  sql: `
-- TR04: a claim is a fact of yoke's, recorded once per AFK run; the label only displays it.
CREATE TABLE claims (
  repo TEXT NOT NULL,
  pr_number INTEGER NOT NULL,
  run_id TEXT NOT NULL UNIQUE,
  issue_number INTEGER NOT NULL,
  recorded_at INTEGER NOT NULL,
  PRIMARY KEY (repo, pr_number)
);

-- A merge attempt belongs to the verdict run it followed: a fresh accept at the same head may try again.
ALTER TABLE merges ADD COLUMN run_id TEXT;

-- TR05: a command whose handling failed is retried, then answered; never stranded in 'processing'.
CREATE TABLE commands_v2 (
  comment_id INTEGER PRIMARY KEY,
  repo TEXT NOT NULL,
  issue_number INTEGER NOT NULL,
  author TEXT NOT NULL,
  body TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('processing', 'done', 'failed')),
  outcome TEXT,
  received_via TEXT NOT NULL,
  processed_at INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 1
);
INSERT INTO commands_v2 (comment_id, repo, issue_number, author, body, state, outcome, received_via, processed_at)
  SELECT comment_id, repo, issue_number, author, body, state, outcome, received_via, processed_at FROM commands;
DROP TABLE commands;
ALTER TABLE commands_v2 RENAME TO commands;
`,
};
