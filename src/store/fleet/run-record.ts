import { decodeStack, type StackMember } from './stack-column.js';
import { TABLES, type TableRow } from '../tables.js';

// A run as yoke reads it: the record, and how a row of the runs table becomes one.

/** The kinds of run, as the runs table declares them (the database CHECKs the same). */
export const RUN_KINDS = TABLES.runs.kind.values;
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

export interface Run {
  id: string;
  repo: string;
  kind: RunKind;
  subject: string;
  issueNumber: number | null;
  prNumber: number | null;
  headSha: string | null;
  /** LD01: for a lander, the base commit it validated the head on (null: it named none, and its verdict lands nothing). */
  baseSha: string | null;
  /** LD05: for a lander, the claim PR heads merged onto baseSha before its own head, in order (empty: the head alone). */
  stack: readonly StackMember[];
  /** LD03: for a lander with fast-forward landing, the merge commit yoke built for it to judge (null: none). */
  landSha: string | null;
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
  /** BU02: what it reserved against the budgets as it launched (0: nothing, or given back; null: no budget applied). */
  reservedUsd: number | null;
  /** The issue's or PR's title when the run launched (text from outside: shown escaped). */
  title: string | null;
  /** Why it started, in words: a lander rejection, a review by @login, a command by @login, a label (TR33). */
  why: string | null;
  /** BU02: an operator set its cost (`yoke runs settle`), it having ended without reporting one: who, and when. */
  settled: { by: string; at: number } | null;
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
> & { title?: string | null; reservedUsd?: number | null };

/** A run to record where the store counts its live runs itself (insertIfRoom). */
export type CountedRun = Omit<NewRun, 'liveAtLaunch'>;

export type RunRow = TableRow<'runs'>;

export function toRun(r: RunRow): Run {
  return {
    id: r.id,
    repo: r.repo,
    kind: r.kind,
    subject: r.subject,
    issueNumber: r.issue_number,
    prNumber: r.pr_number,
    headSha: r.head_sha,
    baseSha: r.base_sha ?? null,
    stack: decodeStack(r.stack ?? ''),
    landSha: r.land_sha ?? null,
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
    cost:
      r.cost_usd === null
        ? null
        : { usd: r.cost_usd, inputTokens: r.input_tokens ?? 0, outputTokens: r.output_tokens ?? 0 },
    reservedUsd: r.reserved_usd ?? null,
    title: r.title,
    why: r.why ?? null,
    settled: r.settled_by && r.settled_at !== null ? { by: r.settled_by, at: r.settled_at } : null,
  };
}
