import type { Db } from './db.js';

export const RUN_KINDS = ['afk_manual', 'afk_auto', 'lander', 'fix'] as const;
export type RunKind = (typeof RUN_KINDS)[number];
export const AFK_KINDS: readonly RunKind[] = ['afk_manual', 'afk_auto'];
export const isAfkKind = (kind: RunKind): boolean => AFK_KINDS.includes(kind);

export const OUTCOMES = ['success', 'failure', 'timeout', 'cancelled'] as const;
export type Outcome = (typeof OUTCOMES)[number];
export type Verdict = 'accept' | 'reject';

/** What a run reported it cost, with its result. */
export interface RunCost {
  usd: number;
  inputTokens: number;
  outputTokens: number;
}

/** What some runs reported they cost, together. */
export interface WorkSpend {
  usd: number;
  inputTokens: number;
  outputTokens: number;
  runs: number;
}

/** One repository's spend on one UTC day (YYYY-MM-DD). */
export interface DailySpend {
  repo: string;
  day: string;
  usd: number;
  inputTokens: number;
  outputTokens: number;
  runs: number;
}

export interface Run {
  id: string;
  repo: string;
  kind: RunKind;
  subject: string;
  issueNumber: number | null;
  prNumber: number | null;
  headSha: string | null;
  status: 'live' | 'ended';
  outcome: Outcome | null;
  outcomeReason: string | null;
  reportedOutcome: 'success' | 'failure' | null;
  verdict: Verdict | null;
  summary: string | null;
  verdictCommentId: number | null;
  launchedAt: number;
  budgetDeadline: number;
  endedAt: number | null;
  launcher: string;
  launcherRef: string | null;
  secretHash: string | null;
  capAtLaunch: number;
  liveAtLaunch: number;
  reportedAt: number | null;
  cost: RunCost | null;
  /** The issue's or PR's title when the run launched (text from outside: shown escaped). */
  title: string | null;
}

export type NewRun = Pick<
  Run,
  | 'id'
  | 'repo'
  | 'kind'
  | 'subject'
  | 'issueNumber'
  | 'prNumber'
  | 'headSha'
  | 'launchedAt'
  | 'budgetDeadline'
  | 'launcher'
  | 'launcherRef'
  | 'secretHash'
  | 'capAtLaunch'
  | 'liveAtLaunch'
> & { title?: string | null };

interface RunRow {
  id: string;
  repo: string;
  kind: RunKind;
  subject: string;
  issue_number: number | null;
  pr_number: number | null;
  head_sha: string | null;
  status: 'live' | 'ended';
  outcome: Outcome | null;
  outcome_reason: string | null;
  reported_outcome: 'success' | 'failure' | null;
  verdict: Verdict | null;
  summary: string | null;
  verdict_comment_id: number | null;
  launched_at: number;
  budget_deadline: number;
  ended_at: number | null;
  launcher: string;
  launcher_ref: string | null;
  secret_hash: string | null;
  cap_at_launch: number;
  live_at_launch: number;
  reported_at: number | null;
  cost_usd: number | null;
  input_tokens: number | null;
  output_tokens: number | null;
  title: string | null;
}

function toRun(r: RunRow): Run {
  return {
    id: r.id,
    repo: r.repo,
    kind: r.kind,
    subject: r.subject,
    issueNumber: r.issue_number,
    prNumber: r.pr_number,
    headSha: r.head_sha,
    status: r.status,
    outcome: r.outcome,
    outcomeReason: r.outcome_reason,
    reportedOutcome: r.reported_outcome,
    verdict: r.verdict,
    summary: r.summary,
    verdictCommentId: r.verdict_comment_id,
    launchedAt: r.launched_at,
    budgetDeadline: r.budget_deadline,
    endedAt: r.ended_at,
    launcher: r.launcher,
    launcherRef: r.launcher_ref,
    secretHash: r.secret_hash,
    capAtLaunch: r.cap_at_launch,
    liveAtLaunch: r.live_at_launch,
    reportedAt: r.reported_at,
    cost: r.cost_usd === null ? null : { usd: r.cost_usd, inputTokens: r.input_tokens ?? 0, outputTokens: r.output_tokens ?? 0 },
    title: r.title,
  };
}

export class RunStore {
  constructor(private readonly db: Db) {}

  countLive(): number {
    return (this.db.prepare("SELECT COUNT(*) AS n FROM runs WHERE status = 'live'").get() as { n: number }).n;
  }

  listLive(): Run[] {
    return (this.db.prepare("SELECT * FROM runs WHERE status = 'live' ORDER BY launched_at, id").all() as RunRow[]).map(toRun);
  }

  liveForSubject(repo: string, subject: string): Run | undefined {
    const row = this.db
      .prepare("SELECT * FROM runs WHERE repo = ? AND subject = ? AND status = 'live'")
      .get(repo, subject) as RunRow | undefined;
    return row && toRun(row);
  }

  get(id: string): Run | undefined {
    const row = this.db.prepare('SELECT * FROM runs WHERE id = ?').get(id) as RunRow | undefined;
    return row && toRun(row);
  }

  listForRepo(repo: string): Run[] {
    return (this.db.prepare('SELECT * FROM runs WHERE repo = ? ORDER BY launched_at, id').all(repo) as RunRow[]).map(toRun);
  }

  /** Runs live now, or launched or ended at or after `since` (a timeline's window), oldest launch first. */
  listSince(since: number): Run[] {
    return (
      this.db
        .prepare("SELECT * FROM runs WHERE status = 'live' OR launched_at >= ? OR ended_at >= ? ORDER BY launched_at, id")
        .all(since, since) as RunRow[]
    ).map(toRun);
  }

  listAll(limit = 1000): Run[] {
    return (this.db.prepare('SELECT * FROM runs ORDER BY launched_at DESC, id LIMIT ?').all(limit) as RunRow[]).map(toRun);
  }

  insert(run: NewRun): void {
    this.db
      .prepare(
        `INSERT INTO runs (id, repo, kind, subject, issue_number, pr_number, head_sha, status, launched_at,
           budget_deadline, launcher, launcher_ref, secret_hash, cap_at_launch, live_at_launch, title)
         VALUES (@id, @repo, @kind, @subject, @issueNumber, @prNumber, @headSha, 'live', @launchedAt,
           @budgetDeadline, @launcher, @launcherRef, @secretHash, @capAtLaunch, @liveAtLaunch, @title)`,
      )
      .run({ ...run, title: run.title ?? null });
  }

  setLauncherRef(id: string, ref: string): void {
    this.db.prepare('UPDATE runs SET launcher_ref = ? WHERE id = ?').run(ref, id);
  }

  /** Records a live run's first report; false when the run has ended or already reported (a report racing the reaper loses). */
  recordReport(id: string, report: { outcome: 'success' | 'failure'; verdict: Verdict | null; summary: string | null; cost?: RunCost | null }, at: number): boolean {
    const cost = report.cost ?? null;
    const res = this.db
      .prepare(
        `UPDATE runs SET reported_outcome = ?, verdict = ?, summary = ?, reported_at = ?, cost_usd = ?, input_tokens = ?, output_tokens = ?
         WHERE id = ? AND reported_outcome IS NULL AND status = 'live'`,
      )
      .run(report.outcome, report.verdict, report.summary, at, cost?.usd ?? null, cost?.inputTokens ?? null, cost?.outputTokens ?? null, id);
    return res.changes === 1;
  }

  /** What the runs on one piece of work (its issue, its claim PR) reported they cost. */
  spendOfWork(repo: string, issueNumber: number | null, prNumber: number | null): WorkSpend {
    return this.db
      .prepare(
        `SELECT COALESCE(SUM(cost_usd), 0) AS usd, COALESCE(SUM(input_tokens), 0) AS inputTokens, COALESCE(SUM(output_tokens), 0) AS outputTokens, COUNT(*) AS runs
         FROM runs WHERE repo = ? AND cost_usd IS NOT NULL AND (issue_number = ? OR pr_number = ?)`,
      )
      .get(repo, issueNumber ?? -1, prNumber ?? -1) as WorkSpend;
  }

  /** Spend reported in [from, to), per repository and UTC day, newest day first. */
  listSpend(from: number, to: number): DailySpend[] {
    return this.db
      .prepare(
        `SELECT repo, strftime('%Y-%m-%d', reported_at / 1000, 'unixepoch') AS day, SUM(cost_usd) AS usd,
           SUM(COALESCE(input_tokens, 0)) AS inputTokens, SUM(COALESCE(output_tokens, 0)) AS outputTokens, COUNT(*) AS runs
         FROM runs WHERE cost_usd IS NOT NULL AND reported_at >= ? AND reported_at < ?
         GROUP BY repo, day ORDER BY day DESC, repo`,
      )
      .all(from, to) as DailySpend[];
  }

  setVerdictComment(id: string, commentId: number): void {
    this.db.prepare('UPDATE runs SET verdict_comment_id = ? WHERE id = ?').run(commentId, id);
  }

  /** Ends a live run; returns false when it had already ended (so callers apply strikes once). */
  end(id: string, outcome: Outcome, reason: string | null, at: number): boolean {
    const res = this.db
      .prepare("UPDATE runs SET status = 'ended', outcome = ?, outcome_reason = ?, ended_at = ? WHERE id = ? AND status = 'live'")
      .run(outcome, reason, at, id);
    return res.changes === 1;
  }

  /** Every lander run of the claim PRs that had one live, or ended, since `since` (what check runs still follow). */
  listLanders(since: number): Run[] {
    return (
      this.db
        .prepare(
          `SELECT r.* FROM runs r
           WHERE r.kind = 'lander' AND EXISTS (
             SELECT 1 FROM runs q WHERE q.kind = 'lander' AND q.repo = r.repo AND q.pr_number = r.pr_number
               AND (q.status = 'live' OR q.ended_at >= ? OR q.launched_at >= ?))
           ORDER BY r.launched_at, r.id`,
        )
        .all(since, since) as RunRow[]
    ).map(toRun);
  }

  /** Reported lander verdicts whose marker comment is not yet posted. */
  listUnpostedVerdicts(): Run[] {
    return (
      this.db
        .prepare("SELECT * FROM runs WHERE kind = 'lander' AND verdict IS NOT NULL AND verdict_comment_id IS NULL ORDER BY launched_at")
        .all() as RunRow[]
    ).map(toRun);
  }
}
