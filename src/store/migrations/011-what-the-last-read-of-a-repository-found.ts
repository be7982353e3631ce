import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 11,
  name: 'what the last read of a repository found',
  sql: `
-- The settings and open claim PRs the last pass read, as JSON: what the repository page shows, from any process.
ALTER TABLE repos ADD COLUMN last_read TEXT;
`,
};
