import type { Migration } from './migration.js';

export const migration: Migration = {
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
};
