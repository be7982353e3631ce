import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 1,
  name: 'fleet engine',
  sql: `
CREATE TABLE repos (
  full_name TEXT PRIMARY KEY,
  installation_id INTEGER,
  auto_loop INTEGER,
  consecutive_failures INTEGER NOT NULL DEFAULT 0,
  paused_since INTEGER,
  disabled_reason TEXT,
  disabled_notified TEXT,
  first_seen_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  repo TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('afk_manual', 'afk_auto', 'lander', 'fix')),
  subject TEXT NOT NULL,
  issue_number INTEGER,
  pr_number INTEGER,
  head_sha TEXT,
  status TEXT NOT NULL CHECK (status IN ('live', 'ended')),
  outcome TEXT CHECK (outcome IN ('success', 'failure', 'timeout', 'cancelled')),
  outcome_reason TEXT,
  reported_outcome TEXT,
  verdict TEXT CHECK (verdict IN ('accept', 'reject')),
  summary TEXT,
  verdict_comment_id INTEGER,
  launched_at INTEGER NOT NULL,
  budget_deadline INTEGER NOT NULL,
  ended_at INTEGER,
  launcher TEXT NOT NULL,
  launcher_ref TEXT,
  secret_hash TEXT,
  cap_at_launch INTEGER NOT NULL,
  live_at_launch INTEGER NOT NULL
);
CREATE UNIQUE INDEX runs_one_live_per_subject ON runs (repo, subject) WHERE status = 'live';
CREATE INDEX runs_by_status ON runs (status);
CREATE INDEX runs_by_subject ON runs (repo, subject, launched_at);

CREATE TABLE commands (
  comment_id INTEGER PRIMARY KEY,
  repo TEXT NOT NULL,
  issue_number INTEGER NOT NULL,
  author TEXT NOT NULL,
  body TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('processing', 'done')),
  outcome TEXT,
  received_via TEXT NOT NULL,
  processed_at INTEGER NOT NULL
);

CREATE TABLE requests (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  repo TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('start', 'land')),
  number INTEGER NOT NULL,
  requested_by TEXT NOT NULL,
  requested_at INTEGER NOT NULL,
  consumed_by_run TEXT
);
CREATE INDEX requests_open ON requests (repo, kind, number) WHERE consumed_by_run IS NULL;

CREATE TABLE merges (
  repo TEXT NOT NULL,
  pr_number INTEGER NOT NULL,
  head_sha TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('merged', 'refused')),
  detail TEXT,
  at INTEGER NOT NULL,
  PRIMARY KEY (repo, pr_number, head_sha)
);

CREATE TABLE http_cache (
  key TEXT PRIMARY KEY,
  etag TEXT,
  last_modified TEXT,
  headers TEXT NOT NULL,
  body TEXT NOT NULL,
  stored_at INTEGER NOT NULL
);

CREATE TABLE deliveries (
  id TEXT PRIMARY KEY,
  event TEXT NOT NULL,
  received_at INTEGER NOT NULL
);
`,
};
