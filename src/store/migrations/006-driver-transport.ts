import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 6,
  name: 'driver transport',
  sql: `
-- DX09: how the run's driver reaches yoke (https, or the database door); it never switches.
ALTER TABLE deployment_runs ADD COLUMN driver_transport TEXT;
`,
};
