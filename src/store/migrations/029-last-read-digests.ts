import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 29,
  name: 'last read digests',
  sql: `
-- SC10: a digest of what a pass last read of each repository (its read without the time it was made), so the next
-- pass learns whether anything changed from a short string, not by parsing every repository's read again.
-- Reads recorded before it have none: the next pass writes each once.
ALTER TABLE repos ADD COLUMN last_read_digest TEXT;
`,
};
