import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 18,
  name: 'asks for changes',
  sql: `
-- TR33: what people with write access asked an agent to do: a review requesting changes on a claim PR, a
-- /yoke fix on one, a /yoke start with instructions on an issue. One row per review or comment, recorded as
-- first read; the run that carried it into its prompt, or why it starts nothing (declined), once known.
CREATE TABLE asks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  repo TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('fix', 'start')),
  number INTEGER NOT NULL,
  source TEXT NOT NULL CHECK (source IN ('review', 'command')),
  source_id INTEGER NOT NULL,
  author TEXT NOT NULL,
  head_sha TEXT,
  body TEXT NOT NULL,
  asked_at INTEGER NOT NULL,
  declined TEXT,
  carried_by_run TEXT,
  UNIQUE (repo, source, source_id)
);
CREATE INDEX asks_open ON asks (repo, kind, number) WHERE carried_by_run IS NULL AND declined IS NULL;

-- Why each run started, in words (a lander rejection, a review by @login, a command by @login, a label).
ALTER TABLE runs ADD COLUMN why TEXT;
`,
};
