import { utcDay, type Sql, type SqlParam } from '../sql/sql.js';
import { int, nullable, real, text, type RowOf } from '../sql/columns.js';
import { TABLES } from '../tables.js';
import type { RunCost } from './run-record.js';

// What runs cost: what they reported (the dashboard's days, one piece of work's total), and BU01-BU02, what
// the budgets hold: each run launched in a budget's period costs what it reported, or what it reserved until
// it reports; a run that never started gives its reservation back. A run that ended without reporting holds
// its reservation, unsettled, until it reports late or an operator settles what it cost.

/** What some runs reported they cost, together. */
const WORK_SPEND = { usd: real, inputTokens: int, outputTokens: int, runs: int };
export type WorkSpend = RowOf<typeof WORK_SPEND>;

/** One repository's spend on one UTC day (YYYY-MM-DD). */
const DAILY_SPEND = { repo: text, day: text, ...WORK_SPEND };
export type DailySpend = RowOf<typeof DAILY_SPEND>;

/** BU06: what the runs of one issue (its AFK run, its claim PR's landers and fixes) reported they cost. */
export interface IssueSpend {
  repo: string;
  issue: number;
  usd: number;
  inputTokens: number;
  outputTokens: number;
  runs: number;
  /** Dollars by kind of run: afk (its AFK runs), lander, fix. */
  byKind: { afk: number; lander: number; fix: number };
}

/** BU01: a budget as the locked launch checks it: the charges of the runs launched since `since`, of one repository or all, of new work or every kind. */
export interface BudgetCheck {
  repo: string | null;
  since: number;
  limitUsd: number;
  newWork: boolean;
}

/** BU02: what a run costs the budgets: what it reported (or an operator settled), else what it reserved. */
export const CHARGE = 'COALESCE(cost_usd, reserved_usd, 0)';
export const NEW_WORK = "kind IN ('afk_manual', 'afk_auto')";

/** What a budget holds, as SQL: the charges of the runs it counts. */
const heldBy = (b: Pick<BudgetCheck, 'repo' | 'newWork'>): string =>
  `SELECT COALESCE(SUM(${CHARGE}), 0) FROM runs WHERE launched_at >= ?${b.repo === null ? '' : ' AND repo = ?'}${b.newWork ? ` AND ${NEW_WORK}` : ''}`;
const heldParams = (b: Pick<BudgetCheck, 'repo' | 'since'>): SqlParam[] => [
  b.since,
  ...(b.repo === null ? [] : [b.repo]),
];

/** BU01: the conditions the locked launch's INSERT adds, one per budget: what it holds plus `reserve` stays within its limit. */
export function budgetsFit(budgets: readonly BudgetCheck[], reserve: number): { sql: string; params: SqlParam[] } {
  return {
    sql: budgets.map((b) => `AND (${heldBy(b)}) + ? <= ? + 1e-9`).join(' '),
    params: budgets.flatMap((b) => [...heldParams(b), reserve, b.limitUsd]),
  };
}

/** BU02: a run whose reservation the budgets hold for want of a reported cost: live, or ended and unsettled. */
const HOLDING = {
  id: text,
  repo: text,
  kind: TABLES.runs.kind,
  launched_at: int,
  reserved_usd: real,
  status: TABLES.runs.status,
};
export interface Holding {
  id: string;
  repo: string;
  kind: (typeof TABLES.runs.kind.values)[number];
  launchedAt: number;
  reservedUsd: number;
  /** Still running (it reports as it ends); else unsettled. */
  live: boolean;
}

export class SpendStore {
  constructor(private readonly sql: Sql) {}

  /** What the runs on one piece of work (its issue, its claim PR) reported they cost. */
  async ofWork(repo: string, issueNumber: number | null, prNumber: number | null): Promise<WorkSpend> {
    // Sums of 64-bit columns are cast back to 64 bits (PostgreSQL's SUM of a BIGINT is NUMERIC); names are quoted to keep their case.
    return (await this.sql.get(
      WORK_SPEND,
      `SELECT COALESCE(SUM(cost_usd), 0) AS usd, CAST(COALESCE(SUM(input_tokens), 0) AS BIGINT) AS "inputTokens",
         CAST(COALESCE(SUM(output_tokens), 0) AS BIGINT) AS "outputTokens", COUNT(*) AS runs
       FROM runs WHERE repo = ? AND cost_usd IS NOT NULL AND (issue_number = ? OR pr_number = ?)`,
      [repo, issueNumber ?? -1, prNumber ?? -1],
    ))!;
  }

  /** Spend reported in [from, to), per repository and UTC day, newest day first. */
  async daily(from: number, to: number): Promise<DailySpend[]> {
    return this.sql.all(
      DAILY_SPEND,
      `SELECT repo, ${utcDay(this.sql.dialect, 'reported_at')} AS day, SUM(cost_usd) AS usd,
         CAST(SUM(COALESCE(input_tokens, 0)) AS BIGINT) AS "inputTokens", CAST(SUM(COALESCE(output_tokens, 0)) AS BIGINT) AS "outputTokens", COUNT(*) AS runs
       FROM runs WHERE cost_usd IS NOT NULL AND reported_at >= ? AND reported_at < ?
       GROUP BY repo, day ORDER BY day DESC, repo`,
      [from, to],
    );
  }

  /** BU02: a run that never started gives its reservation back (what it reported, if anything, still counts). */
  async release(id: string): Promise<void> {
    await this.sql.run('UPDATE runs SET reserved_usd = 0 WHERE id = ? AND cost_usd IS NULL', [id]);
  }

  /** BU02: the runs launched since `since` whose reservations the budgets hold because no cost is recorded, oldest first. */
  async holdings(since: number): Promise<Holding[]> {
    const rows = await this.sql.all(
      HOLDING,
      `SELECT id, repo, kind, launched_at, reserved_usd, status FROM runs
       WHERE launched_at >= ? AND cost_usd IS NULL AND reserved_usd > 0 ORDER BY launched_at, id`,
      [since],
    );
    return rows.map((r) => ({
      id: r.id,
      repo: r.repo,
      kind: r.kind,
      launchedAt: r.launched_at,
      reservedUsd: r.reserved_usd,
      live: r.status === 'live',
    }));
  }

  /** BU02: an operator sets what an ended run that reported no cost spent; false when it is live or has a cost. */
  async settle(id: string, usd: number, by: string, at: number): Promise<boolean> {
    const res = await this.sql.run(
      "UPDATE runs SET cost_usd = ?, settled_by = ?, settled_at = ? WHERE id = ? AND status = 'ended' AND cost_usd IS NULL",
      [usd, by, at, id],
    );
    return res.changes === 1;
  }

  /** BU02: what a run reported it spent after it ended (reaped first), when nothing else is recorded; false otherwise. */
  async recordLateCost(id: string, cost: RunCost): Promise<boolean> {
    const res = await this.sql.run(
      "UPDATE runs SET cost_usd = ?, input_tokens = ?, output_tokens = ? WHERE id = ? AND status = 'ended' AND cost_usd IS NULL",
      [cost.usd, cost.inputTokens, cost.outputTokens, id],
    );
    return res.changes === 1;
  }

  /** BU01: what one budget holds now: the charges of the runs launched since `since` that it counts. */
  async charged(b: Omit<BudgetCheck, 'limitUsd'>): Promise<number> {
    const row = await this.sql.get({ usd: nullable(real) }, `SELECT (${heldBy(b)}) AS usd`, heldParams(b));
    return Number(row?.usd ?? 0);
  }

  /** BU06: each issue's reported cost, over the runs launched since `since` that carry it, costliest first. */
  async byIssue(since: number, limit = 10): Promise<IssueSpend[]> {
    const rows = await this.sql.all(
      {
        repo: text,
        issue: int,
        kind: text,
        usd: nullable(real),
        input: nullable(int),
        output: nullable(int),
        runs: int,
      },
      `SELECT repo, issue_number AS issue, kind, SUM(cost_usd) AS usd, CAST(SUM(COALESCE(input_tokens, 0)) AS BIGINT) AS input,
         CAST(SUM(COALESCE(output_tokens, 0)) AS BIGINT) AS output, COUNT(*) AS runs
       FROM runs WHERE issue_number IS NOT NULL AND cost_usd IS NOT NULL AND launched_at >= ?
       GROUP BY repo, issue_number, kind`,
      [since],
    );
    const byIssue = new Map<string, IssueSpend>();
    for (const r of rows) {
      const key = `${r.repo}#${r.issue}`;
      const i = byIssue.get(key) ?? {
        repo: r.repo,
        issue: Number(r.issue),
        usd: 0,
        inputTokens: 0,
        outputTokens: 0,
        runs: 0,
        byKind: { afk: 0, lander: 0, fix: 0 },
      };
      const usd = Number(r.usd ?? 0);
      i.usd += usd;
      i.inputTokens += Number(r.input ?? 0);
      i.outputTokens += Number(r.output ?? 0);
      i.runs += Number(r.runs);
      i.byKind[r.kind === 'lander' ? 'lander' : r.kind === 'fix' ? 'fix' : 'afk'] += usd;
      byIssue.set(key, i);
    }
    return [...byIssue.values()]
      .sort((a, b) => b.usd - a.usd || a.repo.localeCompare(b.repo) || a.issue - b.issue)
      .slice(0, limit);
  }

  /** BU01: the charges of each repository's runs launched since `month` (and since `day`), all and new work's, in one statement. */
  async chargesSince(
    month: number,
    day: number,
  ): Promise<{ repo: string; day: number; month: number; dayNewWork: number; monthNewWork: number }[]> {
    const rows = await this.sql.all(
      { repo: text, day: nullable(real), month: nullable(real), day_new: nullable(real), month_new: nullable(real) },
      `SELECT repo, SUM(${CHARGE}) AS month, SUM(CASE WHEN launched_at >= ? THEN ${CHARGE} ELSE 0 END) AS day,
         SUM(CASE WHEN ${NEW_WORK} THEN ${CHARGE} ELSE 0 END) AS month_new,
         SUM(CASE WHEN launched_at >= ? AND ${NEW_WORK} THEN ${CHARGE} ELSE 0 END) AS day_new
       FROM runs WHERE launched_at >= ? GROUP BY repo`,
      [day, day, month],
    );
    return rows.map((r) => ({
      repo: r.repo,
      day: Number(r.day ?? 0),
      month: Number(r.month ?? 0),
      dayNewWork: Number(r.day_new ?? 0),
      monthNewWork: Number(r.month_new ?? 0),
    }));
  }
}
