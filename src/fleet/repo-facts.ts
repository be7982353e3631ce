import type { RepoConfig } from '../config/repo-config.js';
import type { MergeQueueRead, PullView, RepoRef, RepoView } from '../forge/types.js';
import type { EnqueueRecord } from '../store/fleet/enqueues.js';
import type { ClaimRecord } from '../store/fleet/claims.js';
import type { AfkLabel } from '../store/fleet/afk-labels.js';
import type { Ask } from '../store/fleet/asks.js';
import type { RepoRead, RepoState } from '../store/fleet/repos.js';
import type { OpenRequest } from '../store/fleet/requests.js';
import type { Run } from '../store/fleet/runs.js';
import type { Landed, LandingRecord } from './stacks.js';
import { groupOf, queuedAt } from './merge-queue.js';

/** Everything a decision about one repo may look at, read before deciding. */
export interface RepoFacts {
  repo: RepoRef;
  state: RepoState;
  config: RepoConfig;
  view: RepoView;
  runs: readonly Run[];
  /** LD03, LD05: yoke's merges here (which head onto which commit, making which); none when not read. */
  merges?: readonly Landed[];
  /** Claims recorded in the store for this repository, by PR number (TR04). */
  claims: ReadonlyMap<number, ClaimRecord>;
  /** TR24: AFK issues' bodies as yoke first saw them labelled, by issue number. */
  afkLabels?: ReadonlyMap<number, AfkLabel>;
  /**
   * LD02: the commit each base branch of an open claim PR is at, as read this pass (never from a cached view: a
   * push to the branch changes no issue); null when GitHub would not say. Empty for a repository with no claims.
   */
  baseTips?: ReadonlyMap<string, string | null>;
  /**
   * LD04: the base branches of open claim PRs on which a ruleset requires GitHub's merge queue (autoland on),
   * each with its queue as read this pass: its PRs and the merge groups GitHub built (null: GitHub would not say).
   */
  mergeQueues?: ReadonlyMap<string, MergeQueueRead | null>;
  /** LD04: the claim PRs yoke added to a merge queue here, on which accept (none when not read). */
  enqueues?: readonly EnqueueRecord[];
  /** TR33: what writers asked an agent to do here, as recorded (and found this pass): open, carried or declined. */
  asks?: readonly Ask[];
  requests: readonly OpenRequest[];
  /**
   * BU05: what GitHub's issue graph says of the issues new work may start here (labelled, or asked for): the
   * open issues blocking each (null: GitHub would not name them), and its sub-issues still open.
   */
  issueGraph?: ReadonlyMap<number, { blockers: string[] | null; openSubIssues: number }>;
  /** Open issues named by open start requests (they need not carry the AFK label), each with its digest as read now (TR24). */
  startableIssues: ReadonlyMap<number, string>;
  /** yoke's own login and the operator-trusted ones, lower-case: their markers are records, their reviews do not hold a merge. */
  trustedLogins: ReadonlySet<string>;
  /** Live subjects as the pass's liveness snapshot had them, before it launched anything. */
  liveSubjects: ReadonlySet<string>;
  /** Spend reported today (UTC), in USD: this repository's and the whole fleet's. */
  spentToday: { repo: number; fleet: number };
  /** The operator's fleet-wide daily limit in USD, if any. */
  fleetDailyUsd: number | null;
  /** Consecutive AFK failures that pause a repository (what a pause notice quotes). */
  pauseThreshold: number;
}

/** What the repository page shows of a read: the opt-in file as parsed (defaults filled in) and the open claim PRs. */
export const repoReadOf = (
  f: Pick<RepoFacts, 'config' | 'view' | 'baseTips' | 'mergeQueues'>,
  readAt: number,
): RepoRead => ({
  readAt,
  settings: f.config,
  openClaims: f.view.claims.map((c) => {
    const queue = f.mergeQueues?.get(baseRefOf(f, c.pull));
    return {
      number: c.pull.number,
      title: c.pull.title,
      headSha: c.pull.headSha,
      author: c.pull.author,
      baseSha: baseTipOf(f, c.pull),
      ...(queue ? { mergeQueue: { queued: queuedAt(queue, c.pull), group: groupOf(queue, c.pull)?.sha ?? null } } : {}),
    };
  }),
});

/** LD01: the branch a claim PR lands on: its base, or the default branch when GitHub did not say. */
export const baseRefOf = (f: Pick<RepoFacts, 'view'>, pull: Pick<PullView, 'baseRef'>): string =>
  pull.baseRef ?? f.view.defaultBranch;

/** LD02: the commit a claim PR's base branch is at now, or null when it was not read. */
export const baseTipOf = (f: Pick<RepoFacts, 'view' | 'baseTips'>, pull: Pick<PullView, 'baseRef'>): string | null =>
  f.baseTips?.get(baseRefOf(f, pull)) ?? null;

export const CLAIM_LABEL = 'yoke:claim';
export const STUCK_LABEL = 'yoke:stuck';

/** LD05: what decisions about stacks read of a repository: its runs and yoke's merges there. */
export const landingRecord = (f: Pick<RepoFacts, 'runs' | 'merges'>): LandingRecord => ({
  runs: f.runs,
  merges: f.merges ?? [],
});
