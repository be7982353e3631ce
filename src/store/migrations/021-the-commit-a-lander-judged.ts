import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 21,
  name: 'the commit a lander judged',
  sql: `
-- LD03: with autoland.fast_forward, the merge commit yoke built on GitHub for a lander to judge (its base with
-- its stack and its head merged on, in order): on an accept, the base branch moves to exactly this commit.
ALTER TABLE runs ADD COLUMN land_sha TEXT;
`,
};
