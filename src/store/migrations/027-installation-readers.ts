import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 27,
  name: 'installation readers',
  sql: `
-- SC08: the yoke processes sharing a store spread the reading of the fleet by installation: each installation is
-- read by the one process that holds its lease (GitHub's limits are per installation), renewed while it reads and
-- taken over by another only once it has lapsed or its holder's process lease has.
CREATE TABLE installation_leases (
  installation_id INTEGER PRIMARY KEY,
  holder TEXT NOT NULL,
  lease_until INTEGER NOT NULL,
  since INTEGER NOT NULL
);
`,
};
