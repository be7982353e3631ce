import { VISIBILITY_MIGRATIONS } from './migrations-visibility.js';
import { DEPLOYMENT_MIGRATIONS } from './migrations-deployments.js';
import { LEASE_MIGRATIONS } from './migrations-leases.js';
import { TRUST_MIGRATIONS } from './migrations-authority.js';

/** Versioned, forward-only migrations, in SQLite's types for both engines (PostgreSQL's: postgresDdl in sql.ts). `postgres`: what PostgreSQL runs instead of `sql` with its types substituted (a function SQLite has no need of). */
export type Migration = { version: number; name: string; sql: string; postgres?: string };

export const MIGRATIONS: readonly Migration[] = [
  {
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
  },
  {
    version: 2,
    name: 'trust boundaries',
    sql: `
-- TR04: a claim is a fact of yoke's, recorded once per AFK run; the label only displays it.
CREATE TABLE claims (
  repo TEXT NOT NULL,
  pr_number INTEGER NOT NULL,
  run_id TEXT NOT NULL UNIQUE,
  issue_number INTEGER NOT NULL,
  recorded_at INTEGER NOT NULL,
  PRIMARY KEY (repo, pr_number)
);

-- A merge attempt belongs to the verdict run it followed: a fresh accept at the same head may try again.
ALTER TABLE merges ADD COLUMN run_id TEXT;

-- TR05: a command whose handling failed is retried, then answered; never stranded in 'processing'.
CREATE TABLE commands_v2 (
  comment_id INTEGER PRIMARY KEY,
  repo TEXT NOT NULL,
  issue_number INTEGER NOT NULL,
  author TEXT NOT NULL,
  body TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('processing', 'done', 'failed')),
  outcome TEXT,
  received_via TEXT NOT NULL,
  processed_at INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 1
);
INSERT INTO commands_v2 (comment_id, repo, issue_number, author, body, state, outcome, received_via, processed_at)
  SELECT comment_id, repo, issue_number, author, body, state, outcome, received_via, processed_at FROM commands;
DROP TABLE commands;
ALTER TABLE commands_v2 RENAME TO commands;
`,
  },
  {
    version: 3,
    name: 'delivery',
    sql: `
-- An item's delivery is owed from the merge of its claim PR until its close-out.
CREATE TABLE delivery_items (
  repo TEXT NOT NULL,
  issue_number INTEGER NOT NULL,
  pr_number INTEGER NOT NULL,
  merge_sha TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('owed', 'delivered')),
  owed_at INTEGER NOT NULL,
  labelled INTEGER NOT NULL DEFAULT 0,
  delivered_at INTEGER,
  PRIMARY KEY (repo, issue_number)
);

-- A plan attached to an item, by a writer's label or command; the label only displays it.
CREATE TABLE qa_attachments (
  repo TEXT NOT NULL,
  issue_number INTEGER NOT NULL,
  plan_id TEXT NOT NULL,
  attached_by TEXT NOT NULL,
  source TEXT NOT NULL CHECK (source IN ('label', 'command', 'api')),
  attached_at INTEGER NOT NULL,
  PRIMARY KEY (repo, issue_number, plan_id)
);

CREATE TABLE deployment_runs (
  id TEXT PRIMARY KEY,
  repo TEXT NOT NULL,
  commit_sha TEXT NOT NULL,
  settings TEXT NOT NULL,
  current_stage INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL CHECK (status IN ('active', 'succeeded', 'failed', 'superseded')),
  creator TEXT,
  driver_id TEXT,
  lease_until INTEGER,
  supersedes TEXT,
  tracking_issue INTEGER,
  tracking_hash TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX deployment_runs_one_active ON deployment_runs (repo) WHERE status = 'active';

CREATE TABLE deployment_members (
  run_id TEXT NOT NULL REFERENCES deployment_runs (id),
  issue_number INTEGER NOT NULL,
  pr_number INTEGER NOT NULL,
  position INTEGER NOT NULL,
  removed_at INTEGER,
  removed_by TEXT,
  removed_reason TEXT,
  PRIMARY KEY (run_id, issue_number)
);

-- Per stage: deploy outcomes, and QA entry (the freeze) with its settlement.
CREATE TABLE deployment_stages (
  run_id TEXT NOT NULL REFERENCES deployment_runs (id),
  stage TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('running', 'succeeded', 'failed', 'frozen', 'settled')),
  attempts INTEGER NOT NULL DEFAULT 0,
  detail TEXT,
  refusal TEXT,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, stage)
);

-- QA07: what each member's QA is at a stage, frozen at entry.
CREATE TABLE member_stages (
  run_id TEXT NOT NULL,
  stage TEXT NOT NULL,
  issue_number INTEGER NOT NULL,
  holder TEXT,
  pr_author TEXT,
  refusal TEXT,
  frozen_at INTEGER NOT NULL,
  settled_at INTEGER,
  PRIMARY KEY (run_id, stage, issue_number)
);
CREATE TABLE member_plans (
  run_id TEXT NOT NULL,
  stage TEXT NOT NULL,
  issue_number INTEGER NOT NULL,
  plan_id TEXT NOT NULL,
  owner TEXT NOT NULL CHECK (owner IN ('member', 'group')),
  group_id TEXT,
  PRIMARY KEY (run_id, stage, issue_number, plan_id)
);

-- A plan as the run's pinned commit has it (member-owned plans run from this).
CREATE TABLE plan_snapshots (
  run_id TEXT NOT NULL,
  plan_id TEXT NOT NULL,
  name TEXT NOT NULL,
  commit_sha TEXT NOT NULL,
  cases TEXT NOT NULL,
  PRIMARY KEY (run_id, plan_id)
);

-- QA09/QA16: a driver-owned plan group with its cases and target pinned at creation.
CREATE TABLE plan_groups (
  id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL,
  stage TEXT NOT NULL,
  plan_id TEXT NOT NULL,
  plan_name TEXT NOT NULL,
  cases TEXT NOT NULL,
  target_commit TEXT NOT NULL,
  covered_item_ids TEXT NOT NULL,
  run_level INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL CHECK (state IN ('open', 'closed')),
  outcome TEXT CHECK (outcome IN ('passed', 'superseded')),
  opened_at INTEGER NOT NULL,
  closed_at INTEGER
);
CREATE INDEX plan_groups_by_run ON plan_groups (run_id, stage, plan_id);

CREATE TABLE qa_verdicts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL,
  stage TEXT NOT NULL,
  issue_number INTEGER,
  group_id TEXT,
  plan_id TEXT NOT NULL,
  case_id TEXT NOT NULL,
  commit_sha TEXT NOT NULL,
  result TEXT NOT NULL CHECK (result IN ('pass', 'fail', 'error', 'waived')),
  evidence TEXT,
  source TEXT NOT NULL,
  replaces TEXT,
  recorded_by TEXT NOT NULL,
  recorded_at INTEGER NOT NULL,
  CHECK ((issue_number IS NULL) <> (group_id IS NULL))
);
CREATE INDEX qa_verdicts_by_run ON qa_verdicts (run_id, stage);

-- QA05: one failure review per failing verdict, however often dispatch repeats.
CREATE TABLE failure_reviews (
  verdict_id INTEGER PRIMARY KEY REFERENCES qa_verdicts (id),
  run_id TEXT NOT NULL,
  stage TEXT NOT NULL,
  subject TEXT NOT NULL,
  case_id TEXT NOT NULL,
  opened_at INTEGER NOT NULL
);

-- Who a dispatch woke, once per wait (QA01, QA02); notices build on it.
CREATE TABLE qa_wakes (
  run_id TEXT NOT NULL,
  stage TEXT NOT NULL,
  recipient TEXT NOT NULL,
  subject TEXT NOT NULL,
  wait_key TEXT NOT NULL,
  reason TEXT NOT NULL,
  woken_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, stage, subject, wait_key)
);
`,
  },
  {
    version: 4,
    name: 'notices and close-out',
    sql: `
-- A notice: who is told what, where, and what became of it (QA20-QA23).
CREATE TABLE notices (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL,
  stage TEXT NOT NULL,
  subject TEXT NOT NULL,
  audience TEXT NOT NULL CHECK (audience IN ('holder', 'driver')),
  recipient_kind TEXT NOT NULL CHECK (recipient_kind IN ('holder', 'driver', 'creator', 'steering')),
  recipient TEXT NOT NULL,
  wait_key TEXT NOT NULL,
  thread INTEGER NOT NULL,
  comment_id INTEGER,
  state TEXT NOT NULL CHECK (state IN ('pending', 'posted', 'edited', 'withdrawn', 'cancelled', 'failed', 'answered', 'resolved', 'superseded')),
  body_hash TEXT,
  detail TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX notices_by_run ON notices (run_id, stage, subject);

-- DX01-DX06: one close-out per member of a run.
CREATE TABLE closeouts (
  run_id TEXT NOT NULL,
  issue_number INTEGER NOT NULL,
  stage TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('running', 'closed', 'refused')),
  refusal TEXT,
  notice_comment_id INTEGER,
  attempts INTEGER NOT NULL DEFAULT 1,
  started_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, issue_number)
);

-- A plan execution: someone running a plan's cases against a stage.
CREATE TABLE plan_executions (
  id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL,
  stage TEXT NOT NULL,
  subject TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('qa-stage', 'deployment-stage')),
  state TEXT NOT NULL CHECK (state IN ('live', 'ended')),
  started_at INTEGER NOT NULL,
  ended_at INTEGER
);
CREATE INDEX plan_executions_live ON plan_executions (run_id, stage) WHERE state = 'live';

-- What the last gate check left waiting, for the fleet report (QA23).
ALTER TABLE deployment_runs ADD COLUMN waits TEXT;
`,
  },
  {
    version: 5,
    name: 'idempotent dispatch',
    sql: `
-- DX07: a dispatch request id, reserved with the work it starts; its result replayed byte for byte.
CREATE TABLE dispatch_requests (
  request_id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL,
  stage TEXT NOT NULL,
  envelope_hash TEXT NOT NULL,
  driver TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('in_flight', 'completed', 'failed')),
  status INTEGER,
  response TEXT,
  detail TEXT,
  attempts INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX dispatch_requests_in_flight ON dispatch_requests (run_id) WHERE state = 'in_flight';

-- The driver's tenure: a lease token that stays the same across renewals, so an envelope can name it.
ALTER TABLE deployment_runs ADD COLUMN lease_token TEXT;

-- Named contention points (DX12): an ownership freeze in progress, a start in a project.
CREATE TABLE work_locks (
  name TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  since INTEGER NOT NULL
);
`,
  },
  {
    version: 6,
    name: 'driver transport',
    sql: `
-- DX09: how the run's driver reaches yoke (https, or the database door); it never switches.
ALTER TABLE deployment_runs ADD COLUMN driver_transport TEXT;
`,
  },
  ...VISIBILITY_MIGRATIONS,
  ...LEASE_MIGRATIONS,
  ...DEPLOYMENT_MIGRATIONS,
  ...TRUST_MIGRATIONS,
];
