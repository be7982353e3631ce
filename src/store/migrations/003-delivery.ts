import type { Migration } from './migration.js';

export const migration: Migration = {
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
};
