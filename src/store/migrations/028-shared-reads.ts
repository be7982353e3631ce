import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 28,
  name: 'shared reads',
  sql: `
-- SC09: what a reader found on GitHub, kept for the pass that decides, whichever process runs it: an installation's
-- listing ('listing:<id>') and each repository's view ('view:<owner/name>', lower-cased), with a digest of the body so
-- a pass fetches only what changed. A webhook on another process marks a view wanted: its reader reads it again first.
CREATE TABLE shared_reads (
  key TEXT PRIMARY KEY,
  installation_id INTEGER NOT NULL,
  body TEXT NOT NULL,
  digest TEXT NOT NULL,
  read_by TEXT NOT NULL,
  read_at INTEGER NOT NULL,
  wanted INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX shared_reads_by_installation ON shared_reads (installation_id);

-- SC08: the processes that read their share of the installations (a server does; the database door does not).
ALTER TABLE processes ADD COLUMN reads INTEGER NOT NULL DEFAULT 0;
`,
};
