import { allGrouped, type Sql, type SqlParam } from '../sql/sql.js';
import { encodeStack, type StackMember } from './stack-column.js';
import { budgetsFit, type BudgetCheck } from './spend.js';
import { int, nullable } from '../sql/columns.js';
import { TABLES } from '../tables.js';

export * from './run-record.js';
import {
  toRun,
  type CountedRun,
  type NewRun,
  type Run,
  type RunCost,
  type RunRow,
  type Outcome,
  type Verdict,
} from './run-record.js';

/** A new run's first columns, declared once: both INSERTs name them from here, and launchValues gives their values in this order. */
const LAUNCH_COLUMNS = [
  'id',
  'repo',
  'kind',
  'subject',
  'issue_number',
  'pr_number',
  'head_sha',
  'launched_at',
  'budget_deadline',
  'launcher',
  'launcher_ref',
  'secret_hash',
  'cap_at_launch',
] as const satisfies readonly (keyof RunRow)[];

/** The launch columns' placeholders in a SELECT, each whole-number one cast to 64 bits (PostgreSQL cannot tell a bare parameter's type there). */
const LAUNCH_SELECTED = LAUNCH_COLUMNS.map((c) => (TABLES.runs[c].kind === 'int' ? 'CAST(? AS BIGINT)' : '?')).join(
  ', ',
);

/** A new run's values for the launch columns, in their order (the compiler asks for one per column). */
function launchValues(run: CountedRun): SqlParam[] {
  const value: Record<(typeof LAUNCH_COLUMNS)[number], SqlParam> = {
    id: run.id,
    repo: run.repo,
    kind: run.kind,
    subject: run.subject,
    issue_number: run.issueNumber,
    pr_number: run.prNumber,
    head_sha: run.headSha,
    launched_at: run.launchedAt,
    budget_deadline: run.budgetDeadline,
    launcher: run.launcher,
    launcher_ref: run.launcherRef,
    secret_hash: run.secretHash,
    cap_at_launch: run.capAtLaunch,
  };
  return LAUNCH_COLUMNS.map((c) => value[c]);
}

export class RunStore {
  constructor(private readonly sql: Sql) {}

  async countLive(): Promise<number> {
    return (await this.sql.get({ n: int }, "SELECT COUNT(*) AS n FROM runs WHERE status = 'live'"))!.n;
  }

  async listLive(): Promise<Run[]> {
    return (await this.sql.all(TABLES.runs, "SELECT * FROM runs WHERE status = 'live' ORDER BY launched_at, id")).map(
      toRun,
    );
  }

  /**
   * SP17: runs reaped as never started whose workflow was never found (`pending:`) and whose deadline has not
   * passed: the ones whose workflow may still turn up late, and must be cancelled when it does.
   */
  async listUnfoundCancelled(now: number): Promise<Run[]> {
    return (
      await this.sql.all(
        TABLES.runs,
        "SELECT * FROM runs WHERE status = 'ended' AND outcome = 'cancelled' AND launcher_ref LIKE 'pending:%' AND budget_deadline > ? ORDER BY launched_at, id",
        [now],
      )
    ).map(toRun);
  }

  /**
   * BU02: the ended runs whose spend is not known yet (no report, no cost, not settled, a workflow bound), while a
   * result of theirs may still be handed back: until `since` (each run's deadline plus the wait for a result).
   */
  async listAwaitingSpend(since: number): Promise<Run[]> {
    return (
      await this.sql.all(
        TABLES.runs,
        `SELECT * FROM runs WHERE status = 'ended' AND reported_outcome IS NULL AND cost_usd IS NULL AND reserved_usd > 0
           AND settled_at IS NULL AND launcher_ref IS NOT NULL AND launcher_ref NOT LIKE 'pending:%' AND budget_deadline > ?
         ORDER BY launched_at, id`,
        [since],
      )
    ).map(toRun);
  }

  async liveForSubject(repo: string, subject: string): Promise<Run | undefined> {
    const row = await this.sql.get(
      TABLES.runs,
      "SELECT * FROM runs WHERE repo = ? AND subject = ? AND status = 'live'",
      [repo, subject],
    );
    return row && toRun(row);
  }

  async get(id: string): Promise<Run | undefined> {
    const row = await this.sql.get(TABLES.runs, 'SELECT * FROM runs WHERE id = ?', [id]);
    return row && toRun(row);
  }

  async listForRepo(repo: string): Promise<Run[]> {
    return (await this.sql.all(TABLES.runs, 'SELECT * FROM runs WHERE repo = ? ORDER BY launched_at, id', [repo])).map(
      toRun,
    );
  }

  /** SC01: every run of each of these repositories, oldest launch first, by repository, in one query. */
  async listForRepos(repos: readonly string[]): Promise<Map<string, Run[]>> {
    return allGrouped(
      this.sql,
      { shape: TABLES.runs, statement: 'SELECT * FROM runs WHERE repo IN (?) ORDER BY launched_at, id', values: repos },
      {
        keyOf: (r) => r.repo,
        map: toRun,
      },
    );
  }

  /** Runs live now, or launched or ended at or after `since` (a timeline's window), oldest launch first. */
  async listSince(since: number): Promise<Run[]> {
    return (
      await this.sql.all(
        TABLES.runs,
        "SELECT * FROM runs WHERE status = 'live' OR launched_at >= ? OR ended_at >= ? ORDER BY launched_at, id",
        [since, since],
      )
    ).map(toRun);
  }

  async listAll(limit = 1000): Promise<Run[]> {
    return (await this.sql.all(TABLES.runs, 'SELECT * FROM runs ORDER BY launched_at DESC, id LIMIT ?', [limit])).map(
      toRun,
    );
  }

  async insert(run: NewRun): Promise<void> {
    await this.sql.run(
      `INSERT INTO runs (${LAUNCH_COLUMNS.join(', ')}, live_at_launch, title, status)
       VALUES (${LAUNCH_COLUMNS.map(() => '?').join(', ')}, ?, ?, 'live')`,
      [...launchValues(run), run.liveAtLaunch, run.title ?? null],
    );
  }

  /**
   * SP06 in one statement: records the run only if, counted inside the
   * statement, fewer than `cap` runs are live, its subject has none, and (for
   * AFK work, `pausable`) its repository is not paused. Returns the live count
   * it recorded, the run included; null when it recorded nothing. The caller
   * holds the write transaction, which keeps the count true until it commits.
   */
  async insertIfRoom(
    run: CountedRun,
    cap: number,
    pausable: boolean,
    budgets: readonly BudgetCheck[] = [],
  ): Promise<number | null> {
    // BU01: and every budget it names stays within its limit with this run's reservation added.
    const fits = budgetsFit(budgets, run.reservedUsd ?? 0);
    const row = await this.sql.get(
      { live_at_launch: int },
      `INSERT INTO runs (${LAUNCH_COLUMNS.join(', ')}, live_at_launch, title, reserved_usd, status)
       SELECT ${LAUNCH_SELECTED}, live.n + 1, ?, ?, 'live'
       FROM (SELECT COUNT(*) AS n FROM runs WHERE status = 'live') live
       WHERE live.n < ?
         AND NOT EXISTS (SELECT 1 FROM runs WHERE repo = ? AND subject = ? AND status = 'live')
         AND NOT (? = 1 AND EXISTS (SELECT 1 FROM repos WHERE full_name = ? AND paused_since IS NOT NULL))
         ${fits.sql}
       RETURNING live_at_launch`,
      [
        ...launchValues(run),
        run.title ?? null,
        run.reservedUsd ?? null,
        cap,
        run.repo,
        run.subject,
        pausable ? 1 : 0,
        run.repo,
        ...fits.params,
      ],
    );
    return row ? row.live_at_launch : null;
  }

  /**
   * SP06, BU01, the locked launch: records the run if there is room (insertIfRoom's
   * rules: the cap, the subject, the pause, and every budget with its reservation) and consumes the request it
   * serves, as one write. SQLite: one transaction of its own. PostgreSQL: one call of yoke_record_launch
   * (migrations 13 and 23), which takes the write lock and then does the same, in one round trip. Returns the
   * live count it recorded, or null.
   */
  async recordLaunch(
    run: CountedRun,
    cap: number,
    pausable: boolean,
    requestId: number | null,
    budgets: readonly BudgetCheck[] = [],
  ): Promise<number | null> {
    if (this.sql.dialect === 'postgres') {
      const row = await this.sql.get(
        { live: nullable(int) },
        'SELECT yoke_record_launch(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) AS live',
        [
          ...launchValues(run),
          run.title ?? null,
          cap,
          pausable ? 1 : 0,
          requestId,
          run.reservedUsd ?? null,
          JSON.stringify(
            budgets.map((b) => ({ repo: b.repo, since: b.since, limit: b.limitUsd, new_work: b.newWork })),
          ),
        ],
      );
      return row?.live ?? null;
    }
    return this.sql.transaction(async (tx) => {
      const live = await new RunStore(tx).insertIfRoom(run, cap, pausable, budgets);
      if (live !== null && requestId !== null)
        await tx.run('UPDATE requests SET consumed_by_run = ? WHERE id = ? AND consumed_by_run IS NULL', [
          run.id,
          requestId,
        ]);
      return live;
    });
  }

  /** LD01, LD05: the tree a lander was dispatched to judge (its base and the heads merged onto it first), before it starts. */
  async setJudgedTree(id: string, base: string, stack: readonly StackMember[]): Promise<void> {
    await this.sql.run('UPDATE runs SET base_sha = ?, stack = ? WHERE id = ?', [base, encodeStack(stack), id]);
  }

  /** LD03: the commit built for a lander to judge, before it starts. */
  async setLandSha(id: string, sha: string): Promise<void> {
    await this.sql.run('UPDATE runs SET land_sha = ? WHERE id = ?', [sha, id]);
  }

  async setLauncherRef(id: string, ref: string): Promise<void> {
    await this.sql.run('UPDATE runs SET launcher_ref = ? WHERE id = ?', [ref, id]);
  }

  /** Records a live run's first report; false when the run has ended or already reported (a report racing the reaper loses). */
  async recordReport(
    id: string,
    report: { outcome: 'success' | 'failure'; verdict: Verdict | null; summary: string | null; cost?: RunCost | null },
    at: number,
  ): Promise<boolean> {
    const cost = report.cost ?? null;
    const res = await this.sql.run(
      `UPDATE runs SET reported_outcome = ?, verdict = ?, summary = ?, reported_at = ?, cost_usd = ?, input_tokens = ?, output_tokens = ?
       WHERE id = ? AND reported_outcome IS NULL AND status = 'live'`,
      [
        report.outcome,
        report.verdict,
        report.summary,
        at,
        cost?.usd ?? null,
        cost?.inputTokens ?? null,
        cost?.outputTokens ?? null,
        id,
      ],
    );
    return res.changes === 1;
  }

  async setVerdictComment(id: string, commentId: number): Promise<void> {
    await this.sql.run('UPDATE runs SET verdict_comment_id = ? WHERE id = ?', [commentId, id]);
  }

  /** Ends a live run; returns false when it had already ended (so callers apply strikes once). */
  async end(id: string, outcome: Outcome, reason: string | null, at: number): Promise<boolean> {
    const res = await this.sql.run(
      "UPDATE runs SET status = 'ended', outcome = ?, outcome_reason = ?, ended_at = ? WHERE id = ? AND status = 'live'",
      [outcome, reason, at, id],
    );
    return res.changes === 1;
  }

  /** Every lander run of the claim PRs that had one live, or ended, since `since` (what check runs still follow). */
  async listLanders(since: number): Promise<Run[]> {
    return (
      await this.sql.all(
        TABLES.runs,
        `SELECT r.* FROM runs r
         WHERE r.kind = 'lander' AND EXISTS (
           SELECT 1 FROM runs q WHERE q.kind = 'lander' AND q.repo = r.repo AND q.pr_number = r.pr_number
             AND (q.status = 'live' OR q.ended_at >= ? OR q.launched_at >= ?))
         ORDER BY r.launched_at, r.id`,
        [since, since],
      )
    ).map(toRun);
  }

  /** Reported lander verdicts whose marker comment is not yet posted. */
  async listUnpostedVerdicts(): Promise<Run[]> {
    return (
      await this.sql.all(
        TABLES.runs,
        "SELECT * FROM runs WHERE kind = 'lander' AND verdict IS NOT NULL AND verdict_comment_id IS NULL ORDER BY launched_at",
      )
    ).map(toRun);
  }
}
