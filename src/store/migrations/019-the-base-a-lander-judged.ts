import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 19,
  name: 'the base a lander judged',
  sql: `
-- LD01: the base commit a lander validated the claim PR's head on (the merge of the head onto it). Its
-- verdict counts only while the base branch is still there (LD02); null for a lander that named none.
ALTER TABLE runs ADD COLUMN base_sha TEXT;
`,
};
