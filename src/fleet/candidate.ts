import { makeRefusal, type Code, type Refusal } from '../kernel/codes/table.js';
import type { RunKind } from '../store/fleet/runs.js';
import type { StackMember } from '../store/fleet/stack-column.js';
import type { AskKey } from '../store/fleet/asks.js';

// Priority is data: a stage rank on the candidate, and the only sort key.
// A lower rank sits further down the pipeline and launches first.
export const SPAWN_STAGES = ['lander', 'fix', 'new_work'] as const;
export type SpawnStage = (typeof SPAWN_STAGES)[number];

export const stageRank = (stage: SpawnStage): number => SPAWN_STAGES.indexOf(stage);

export interface Candidate {
  stage: SpawnStage;
  repo: string;
  installationId: number;
  kind: RunKind;
  /** What the run works on: `issue#N` or `pr#N`. At most one live run each. */
  subject: string;
  issueNumber: number | null;
  prNumber: number | null;
  headSha: string | null;
  /** LD01: for a lander, the base commit it validates the head on: where the PR's base branch was this pass. */
  baseSha?: string | null;
  /** LD05: for a lander, the claim PR heads merged onto the base before its own, in order. */
  stack?: readonly StackMember[];
  /** LD04: for a lander of a merge group, the group's commit, which it judges as it is. */
  landSha?: string;
  budgetMinutes: number;
  /** The open request (start/land) this launch consumes, if any. */
  requestId: number | null;
  why: string;
  /** TR33: the writers' asks this run carries into its prompt (reviews, `/yoke fix`, `/yoke start` with text). */
  asks?: readonly AskKey[];
  /** The issue's or PR's title, as the pass read it (shown as text, never as markup). */
  title?: string;
}

export const subjectKey = (repo: string, subject: string): string => `${repo}:${subject}`;

/**
 * Work the pass passed over, and why (a why-not code from the one code table).
 * `subject` is null when a whole repository waits (at its cap, or unread for the request budget).
 */
export interface Waiting {
  repo: string;
  stage: SpawnStage;
  subject: string | null;
  /** The issue's or PR's title, as the pass read it, when it did. */
  title?: string;
  reason: Refusal;
}

/** What a decision returns: what to launch, and what waits with its reason. */
export interface Decided {
  candidates: Candidate[];
  waiting: Waiting[];
}

/** A waiting piece of work as the fleet report, the CLI and both dashboards show it. */
export interface WaitingItem {
  repo: string;
  stage: string;
  subject: string | null;
  title: string | null;
  code: Code;
  message: string;
  recovery: string;
}

export const waitingItem = (w: Waiting): WaitingItem => ({
  repo: w.repo,
  stage: w.stage,
  subject: w.subject,
  title: w.title ?? null,
  code: w.reason.code,
  message: w.reason.message,
  recovery: w.reason.recovery,
});

/** A repository the pass did not read, and why: its installation's budget (SC03), or its reader has not shared it yet (SC09). */
export interface Deferral {
  repo: string;
  installationId: number;
  points: number;
  /** The process that reads it, when that is why. */
  reader?: string;
}

/** Why a repository was not read, as people read it. */
export const deferralRefusal = (d: Deferral) =>
  d.reader === undefined
    ? makeRefusal('request_budget', { repo: d.repo, installation: d.installationId, points: d.points })
    : makeRefusal('reader_pending', { repo: d.repo, installation: d.installationId, reader: d.reader });
