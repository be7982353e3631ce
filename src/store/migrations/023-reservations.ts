import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 23,
  name: 'reservations',
  sql: `
-- BU01, BU02: what a run may spend, reserved against the budgets as it launches (its whole limit; 0 for a run
-- that calls no model, null where no budget applied). What a run costs the budgets is what it reported, or,
-- until it reports (and when it never does), what it reserved: COALESCE(cost_usd, reserved_usd, 0). A run
-- that never started gives its reservation back (reserved_usd = 0). Budgets count runs by launch time.
ALTER TABLE runs ADD COLUMN reserved_usd REAL;
CREATE INDEX runs_launched ON runs (launched_at);
`,
  postgres: `
ALTER TABLE runs ADD COLUMN reserved_usd DOUBLE PRECISION;
CREATE INDEX runs_launched ON runs (launched_at);
-- BU01 on PostgreSQL: the locked launch (migration 13) also reserves the run's limit, refusing when any
-- budget it names would pass its limit. p_budgets: [{"repo": text|null, "since": ms, "limit": usd,
-- "new_work": bool}], each the charges of the runs launched since "since" (of that repository, or the whole
-- fleet; new work only, or every kind). Checked under the same lock as the cap.
DROP FUNCTION yoke_record_launch(TEXT, TEXT, TEXT, TEXT, BIGINT, BIGINT, TEXT, BIGINT, BIGINT, TEXT, TEXT, TEXT, BIGINT, TEXT, BIGINT, BIGINT, BIGINT);
CREATE FUNCTION yoke_record_launch(
  p_id TEXT, p_repo TEXT, p_kind TEXT, p_subject TEXT, p_issue BIGINT, p_pr BIGINT, p_head TEXT,
  p_launched BIGINT, p_deadline BIGINT, p_launcher TEXT, p_ref TEXT, p_secret TEXT, p_cap_at BIGINT,
  p_title TEXT, p_cap BIGINT, p_pausable BIGINT, p_request BIGINT, p_reserved DOUBLE PRECISION, p_budgets TEXT
) RETURNS BIGINT VOLATILE LANGUAGE plpgsql AS $fn$
DECLARE
  recorded BIGINT;
  b JSONB;
  charged DOUBLE PRECISION;
BEGIN
  PERFORM pg_advisory_xact_lock(7079000);
  FOR b IN SELECT * FROM jsonb_array_elements(COALESCE(p_budgets, '[]')::jsonb) LOOP
    SELECT COALESCE(SUM(COALESCE(cost_usd, reserved_usd, 0)), 0) INTO charged FROM runs
      WHERE launched_at >= (b->>'since')::BIGINT
        AND (b->>'repo' IS NULL OR repo = b->>'repo')
        AND (NOT (b->>'new_work')::BOOLEAN OR kind IN ('afk_manual', 'afk_auto'));
    IF charged + COALESCE(p_reserved, 0) > (b->>'limit')::DOUBLE PRECISION + 1e-9 THEN
      RETURN NULL;
    END IF;
  END LOOP;
  INSERT INTO runs (id, repo, kind, subject, issue_number, pr_number, head_sha, status, launched_at,
    budget_deadline, launcher, launcher_ref, secret_hash, cap_at_launch, live_at_launch, title, reserved_usd)
  SELECT p_id, p_repo, p_kind, p_subject, p_issue, p_pr, p_head, 'live', p_launched, p_deadline, p_launcher, p_ref,
    p_secret, p_cap_at, live.n + 1, p_title, p_reserved
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
