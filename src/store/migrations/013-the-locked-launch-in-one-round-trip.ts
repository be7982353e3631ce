import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 13,
  name: 'the locked launch in one round trip',
  // SQLite records a launch in a transaction of its own (RunStore.recordLaunch): nothing to create there.
  sql: '-- PostgreSQL only: the locked launch as one function call.',
  postgres: `
-- SP06 on PostgreSQL in one round trip: the write lock every write transaction takes first (postgres-sql.ts),
-- then, in a statement whose snapshot is taken after it, the count, the checks and the record, as
-- RunStore.insertIfRoom does them inside SQLite's transaction; then the request it serves is consumed.
-- Returns the live count it recorded, the run included, or NULL when it recorded nothing.
CREATE FUNCTION yoke_record_launch(
  p_id TEXT, p_repo TEXT, p_kind TEXT, p_subject TEXT, p_issue BIGINT, p_pr BIGINT, p_head TEXT,
  p_launched BIGINT, p_deadline BIGINT, p_launcher TEXT, p_ref TEXT, p_secret TEXT, p_cap_at BIGINT,
  p_title TEXT, p_cap BIGINT, p_pausable BIGINT, p_request BIGINT
) RETURNS BIGINT VOLATILE LANGUAGE plpgsql AS $fn$
DECLARE
  recorded BIGINT;
BEGIN
  PERFORM pg_advisory_xact_lock(7079000);
  INSERT INTO runs (id, repo, kind, subject, issue_number, pr_number, head_sha, status, launched_at,
    budget_deadline, launcher, launcher_ref, secret_hash, cap_at_launch, live_at_launch, title)
  SELECT p_id, p_repo, p_kind, p_subject, p_issue, p_pr, p_head, 'live', p_launched, p_deadline, p_launcher, p_ref,
    p_secret, p_cap_at, live.n + 1, p_title
  FROM (SELECT COUNT(*) AS n FROM runs WHERE status = 'live') live
  WHERE live.n < p_cap
    AND NOT EXISTS (SELECT 1 FROM runs WHERE repo = p_repo AND subject = p_subject AND status = 'live')
    AND NOT (p_pausable = 1 AND EXISTS (SELECT 1 FROM repos WHERE full_name = p_repo AND paused_since IS NOT NULL))
  RETURNING live_at_launch INTO recorded;
  IF recorded IS NOT NULL AND p_request IS NOT NULL THEN
    UPDATE requests SET consumed_by_run = p_id WHERE id = p_request AND consumed_by_run IS NULL;
  END IF;
  RETURN recorded;
END
$fn$;
`,
};
