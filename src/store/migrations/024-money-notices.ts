import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 24,
  name: 'money notices',
  sql: `
-- BU03: the comment on a claim PR that says its fix waits for money, once per PR and UTC day.
CREATE TABLE money_notices (
  repo TEXT NOT NULL,
  thread INTEGER NOT NULL,
  day TEXT NOT NULL,
  comment_id INTEGER NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (repo, thread, day)
);
`,
};
