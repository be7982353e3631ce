import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 26,
  name: 'settled spend',
  sql: `
-- BU02: a run that ended without reporting what it spent holds its reservation (unsettled) until an operator
-- sets what it cost (\`yoke runs settle RUN --usd N\`): its cost_usd, with who settled it and when.
ALTER TABLE runs ADD COLUMN settled_by TEXT;
ALTER TABLE runs ADD COLUMN settled_at INTEGER;
`,
};
