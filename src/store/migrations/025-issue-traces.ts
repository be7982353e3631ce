import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 25,
  name: 'issue traces',
  sql: `
-- Each AFK issue's trace: the span its label opened, which every later span about the issue (its runs, its
-- landers, its merge, its deployment and close-out) names as its parent, so one issue reads as one trace.
CREATE TABLE issue_traces (
  repo TEXT NOT NULL,
  issue_number INTEGER NOT NULL,
  trace_id TEXT NOT NULL,
  span_id TEXT NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (repo, issue_number)
);
`,
};
