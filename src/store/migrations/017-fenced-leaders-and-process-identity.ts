import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 17,
  name: 'fenced leaders and process identity',
  sql: `
-- TR31: each change of a role's holder raises its epoch; a leader checks holder and epoch before it writes outside the store.
ALTER TABLE leaders ADD COLUMN epoch INTEGER NOT NULL DEFAULT 1;

-- TR31: a process is judged dead by its pid only from the same kernel boot and pid namespace ('' where
-- unknown: then by its lease alone), and only while that pid's start time is the one recorded.
ALTER TABLE processes ADD COLUMN machine TEXT NOT NULL DEFAULT '';
ALTER TABLE processes ADD COLUMN pid_start TEXT NOT NULL DEFAULT '';
`,
};
