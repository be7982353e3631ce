import { CONTAINMENT_MIGRATIONS } from './migrations-containment.js';

// What the authority issue's fixes keep across processes. After the containment ones, appended to MIGRATIONS.
const AUTHORITY_MIGRATIONS: readonly { version: number; name: string; sql: string; postgres?: string }[] = [
  {
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
  },
  {
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
  },
];

/** The containment and authority migrations, in order. */
export const TRUST_MIGRATIONS = [...CONTAINMENT_MIGRATIONS, ...AUTHORITY_MIGRATIONS];
