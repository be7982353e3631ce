import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 12,
  name: 'one leader for the ticks',
  sql: `
-- The one process that runs the fleet's ticks (the scheduler, the reaper, the close-out sweep, the notice
-- redelivery): a lease it renews, taken over by another process only once it lapses.
CREATE TABLE leaders (
  role TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  lease_until INTEGER NOT NULL,
  since INTEGER NOT NULL
);
`,
};
