import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 20,
  name: 'stacks and the commits yoke landed',
  sql: `
-- LD05: the claim PR heads a lander merged onto base_sha before its own, in order ("12:<sha> 15:<sha>"):
-- what it judged is base_sha with those heads, then its own head, merged onto it. Empty: the head alone.
ALTER TABLE runs ADD COLUMN stack TEXT NOT NULL DEFAULT '';
-- LD03, LD05: the commit each merge of yoke's was made onto and the commit it made, so a stack judged on a
-- base is known to be the same tree as the base those merges made (null for merges recorded before).
ALTER TABLE merges ADD COLUMN base_sha TEXT;
ALTER TABLE merges ADD COLUMN merge_sha TEXT;
`,
};
