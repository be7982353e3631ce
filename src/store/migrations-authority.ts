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
];

/** The containment and authority migrations, in order. */
export const TRUST_MIGRATIONS = [...CONTAINMENT_MIGRATIONS, ...AUTHORITY_MIGRATIONS];
