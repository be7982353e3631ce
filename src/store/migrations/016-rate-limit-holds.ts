import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 16,
  name: 'rate-limit holds',
  sql: `
-- GitHub said "no request until then" to an installation (a secondary rate limit's retry-after, or a
-- spent primary limit's reset): every process holds every request of that installation until then.
CREATE TABLE rate_holds (
  scope TEXT PRIMARY KEY,
  until_ms INTEGER NOT NULL
);
`,
};
