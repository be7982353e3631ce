import type { ClaimView, Forge, RepoRef, ReviewView } from '../forge/types.js';
import { canWrite } from '../kernel/permission.js';
import type { Log } from '../kernel/log.js';
import type { RepoConfig } from '../config/repo-config.js';
import { fixExhaustedNotice, mergeRefusedNotice, protectedApprovedNotice, protectedHoldNotice } from './messages.js';
import type { ProtectedHold } from '../store/protected-holds.js';
import { headApprovers, protectedFilesOf, protectedGlobs } from './protected-paths.js';
import type { Store } from '../store/store.js';
import { pullSubject, subjectKey } from './candidate.js';
import { shouldSpawnFix } from './producers.js';
import { fixAsksOf } from './asks.js';
import { askedBy } from './asks.js';
import { readClaim } from './claims.js';
import { CLAIM_LABEL, STUCK_LABEL, baseRefOf, baseTipOf, type RepoFacts } from './repo-facts.js';
import { isLandable, untrustedMarkers, verdictNow } from './verdicts.js';

// What a pass does besides launching, decided purely from RepoFacts:
// record claims (and label them, for display), merge heads whose recorded
// verdict is accept, and tell maintainers when fix-forward has run out.
// Executed after the decisions.

export type RepoAction =
  | { type: 'record_claim'; pr: number; run: string; issue: number }
  | { type: 'label_claim'; pr: number; run: string }
  /** LD03: merge the head the verdict judged, only while `branch` is still at `base`, the base it judged it on. */
  | {
      type: 'merge';
      pr: number;
      sha: string;
      base: string;
      branch: string;
      method: 'merge' | 'squash' | 'rebase';
      run: string;
    }
  | { type: 'fix_exhausted'; pr: number; attempts: number; askedBy: string | null }
  | { type: 'hold_protected'; pr: number; sha: string; files: string[] }
  /** TR14: an accepted head whose change touches no protected path: its check may now say success. */
  | { type: 'clear_head'; pr: number; sha: string }
  | { type: 'approve_hold'; pr: number; sha: string; files: string[]; by: string; commentId: number | null }
  | { type: 'ignored_marker'; pr: number; commentId: number; author: string; reason: string };

export interface AfterLaunch {
  /** Live subjects once this pass's launches are counted (a lander just launched holds its PR's merge). */
  liveSubjects: ReadonlySet<string>;
  /** Whether the merge this verdict run leads to was already attempted (merged, or refused on this same verdict). */
  attempted(pr: number, sha: string, verdictRun: string): boolean;
}

/** TR14: what the pass read about held heads before deciding. */
export interface HoldReads {
  /** Held heads already recorded, by `pr@sha`. */
  holds: ReadonlyMap<string, ProtectedHold>;
  /** Of each claim's approvers of its head (headApprovers), those GitHub says can write now. */
  writerApprovers: ReadonlyMap<number, readonly string[]>;
  /**
   * Of each accepted claim's standing change requests, those from logins GitHub says cannot write: GitHub
   * ignores them, and so does autoland. Not read, every change request holds (fail closed).
   */
  readerChangeRequests: ReadonlyMap<number, readonly string[]>;
}

export const NO_HOLD_READS: HoldReads = {
  holds: new Map(),
  writerApprovers: new Map(),
  readerChangeRequests: new Map(),
};

/** What GitHub could not list stands for a protected change: yoke fails closed. */
export const UNLISTED_FILES = '(GitHub did not list the files of this change)';

/** The protected paths a claim's change touches at its head (TR14). */
export function protectedChangeOf(facts: Pick<RepoFacts, 'config'>, claim: Pick<ClaimView, 'files'>): string[] {
  if (claim.files === null) return [UNLISTED_FILES];
  return protectedFilesOf(claim.files, protectedGlobs(facts.config.protected_paths));
}

export function planRepoActions(facts: RepoFacts, after: AfterLaunch, reads: HoldReads = NO_HOLD_READS): RepoAction[] {
  const actions: RepoAction[] = [];
  for (const pull of facts.view.pulls) {
    const claim = readClaim(facts, pull);
    if (!claim.claimed) continue;
    if (!claim.recorded)
      actions.push({ type: 'record_claim', pr: pull.number, run: claim.runId, issue: claim.issueNumber });
    if (!pull.labels.includes(CLAIM_LABEL)) actions.push({ type: 'label_claim', pr: pull.number, run: claim.runId });
  }
  for (const claim of facts.view.claims) {
    for (const ig of untrustedMarkers(facts, claim.pull.number, claim.comments))
      actions.push({ type: 'ignored_marker', pr: claim.pull.number, ...ig });
    if (!isLandable(facts, claim)) continue;
    const n = claim.pull.number;
    const current = verdictNow(facts.runs, claim.pull, baseTipOf(facts, claim.pull));
    // TR14: an accepted head that changes what yoke trusts waits for a writer's approval of that head.
    let released = true;
    if (current?.verdict === 'accept') {
      const files = protectedChangeOf(facts, claim);
      if (!files.length && !reads.holds.has(`${n}@${claim.pull.headSha}`))
        actions.push({ type: 'clear_head', pr: n, sha: claim.pull.headSha });
      if (files.length) {
        const held = reads.holds.get(`${n}@${claim.pull.headSha}`);
        const by = held?.approvedBy ?? reads.writerApprovers.get(n)?.[0] ?? null;
        if (!held || held.commentId === null)
          actions.push({ type: 'hold_protected', pr: n, sha: claim.pull.headSha, files });
        else if (!held.approvedBy && by)
          actions.push({
            type: 'approve_hold',
            pr: n,
            sha: claim.pull.headSha,
            files: held.files,
            by,
            commentId: held.commentId,
          });
        released = Boolean(held && by);
      }
    }
    if (
      current?.verdict === 'accept' &&
      released &&
      facts.config.autoland.enabled &&
      !after.liveSubjects.has(subjectKey(facts.repo.fullName, pullSubject(n))) &&
      !after.attempted(n, claim.pull.headSha, current.runId) &&
      !hasBlockingReview(facts, claim.reviews, claim.pull.author, reads.readerChangeRequests.get(n) ?? [])
    ) {
      actions.push({
        type: 'merge',
        pr: n,
        sha: claim.pull.headSha,
        base: baseTipOf(facts, claim.pull)!,
        branch: baseRefOf(facts, claim.pull),
        method: facts.config.autoland.merge_method,
        run: current.runId,
      });
    }
    if (shouldSpawnFix(facts, claim) === 'exhausted' && !claim.pull.labels.includes(STUCK_LABEL)) {
      // TR33: a fix only writers asked for says who asked, and what they can do instead.
      const rejected = current?.verdict === 'reject' && facts.config.fix_forward.enabled;
      const asks = fixAsksOf(facts, claim);
      actions.push({
        type: 'fix_exhausted',
        pr: n,
        attempts: facts.config.fix_forward.max_attempts,
        askedBy: !rejected && asks.length ? askedBy(asks) : null,
      });
    }
  }
  return actions;
}

/** A writer's latest "changes requested" holds the merge, as it does on GitHub until dismissed; a reader's does not. */
function hasBlockingReview(
  facts: RepoFacts,
  reviews: readonly ReviewView[],
  author: string,
  readers: readonly string[],
): boolean {
  return (
    blockingReviewers(reviews, (login) => login === author || facts.trustedLogins.has(login.toLowerCase())).filter(
      (login) => !readers.includes(login),
    ).length > 0
  );
}

/** Of these logins, those GitHub says cannot write: a permission it would not tell counts as a writer's (fail closed). */
export async function readersAmong(
  forge: Forge,
  repo: RepoFacts['repo'],
  logins: readonly string[],
): Promise<string[]> {
  const readers: string[] = [];
  for (const login of logins) {
    const permission = await forge.getPermission(repo, login).catch(() => 'write' as const);
    if (!canWrite(permission)) readers.push(login);
  }
  return readers;
}

/** SP18: who has changes requested standing: each reviewer's latest approval or change request, not a comment. */
export function blockingReviewers(reviews: readonly ReviewView[], ignored: (login: string) => boolean): string[] {
  const latest = new Map<string, string>();
  for (const r of reviews) {
    if (ignored(r.author) || r.state === 'COMMENTED') continue;
    latest.set(r.author, r.state);
  }
  return [...latest].filter(([, state]) => state === 'CHANGES_REQUESTED').map(([login]) => login);
}

export interface ActionDeps {
  store: Store;
  forge: Forge;
  now: () => number;
  log: Log;
  /** Told of each claim PR yoke merged (delivery listens: the item's delivery is owed from then). */
  onMerged?: MergeListener;
}

/** A claim PR yoke merged, at the commit GitHub made of it. */
export interface MergedClaim {
  repo: RepoRef;
  pr: number;
  mergeSha: string;
  config: RepoConfig;
}

/** The port through which the fleet says "merged at sha"; it gets the same forge and store the merge used. */
export type MergeListener = (
  deps: Pick<ActionDeps, 'store' | 'forge' | 'now' | 'log'>,
  merged: MergedClaim,
) => Promise<void>;

export async function executeRepoActions(
  deps: ActionDeps,
  facts: RepoFacts,
  actions: readonly RepoAction[],
): Promise<void> {
  const { forge, store, log } = deps;
  for (const a of actions) {
    try {
      if (a.type === 'record_claim') {
        await store.claims.record({
          repo: facts.repo.fullName,
          prNumber: a.pr,
          runId: a.run,
          issueNumber: a.issue,
          recordedAt: deps.now(),
        });
      } else if (a.type === 'label_claim') {
        await forge.addLabels(facts.repo, a.pr, [CLAIM_LABEL]);
      } else if (a.type === 'merge') {
        // LD03: the base is read again at the instant of the merge: a merge earlier in this pass, or a push,
        // moved it, and the verdict judged another tree. Nothing is merged; the next pass validates it anew.
        const tip = await forge.readBranchTip(facts.repo, a.branch);
        if (tip !== a.base) {
          log.info(
            { repo: facts.repo.fullName, pr: a.pr, sha: a.sha, judged: a.base, now: tip },
            'not merged: its base branch moved since the verdict; a lander validates it on the new base',
          );
          continue;
        }
        const res = await forge.merge(facts.repo, a.pr, a.sha, a.method);
        if (res.ok) {
          await store.merges.record({
            repo: facts.repo.fullName,
            prNumber: a.pr,
            headSha: a.sha,
            state: 'merged',
            detail: null,
            at: deps.now(),
            runId: a.run,
          });
          log.info({ repo: facts.repo.fullName, pr: a.pr, sha: a.sha }, 'merged accepted claim PR');
          await deps.onMerged?.(deps, { repo: facts.repo, pr: a.pr, mergeSha: res.sha, config: facts.config });
        } else {
          await store.merges.record({
            repo: facts.repo.fullName,
            prNumber: a.pr,
            headSha: a.sha,
            state: 'refused',
            detail: res.message,
            at: deps.now(),
            runId: a.run,
          });
          await forge.createComment(facts.repo, a.pr, mergeRefusedNotice(a.pr, a.sha, res.message));
        }
      } else if (a.type === 'clear_head') {
        await store.protectedHolds.hold({
          repo: facts.repo.fullName,
          prNumber: a.pr,
          headSha: a.sha,
          files: [],
          recordedAt: deps.now(),
        });
      } else if (a.type === 'hold_protected') {
        await holdProtected(deps, facts, a);
      } else if (a.type === 'approve_hold') {
        await store.protectedHolds.approve(facts.repo.fullName, a.pr, a.sha, a.by);
        if (a.commentId !== null)
          await forge.editComment(facts.repo, a.commentId, protectedApprovedNotice(a.pr, a.sha, a.files, a.by));
        log.info({ repo: facts.repo.fullName, pr: a.pr, sha: a.sha, by: a.by }, 'a writer approved a held head');
      } else if (a.type === 'fix_exhausted') {
        await forge.addLabels(facts.repo, a.pr, [STUCK_LABEL]);
        const author = facts.view.claims.find((c) => c.pull.number === a.pr)?.pull.author ?? null;
        await forge.createComment(facts.repo, a.pr, fixExhaustedNotice(author, a.pr, a.attempts, a.askedBy));
      } else {
        log.warn(
          { repo: facts.repo.fullName, pr: a.pr, comment: a.commentId, author: a.author, reason: a.reason },
          'ignored verdict marker',
        );
      }
    } catch (err) {
      log.warn(
        { repo: facts.repo.fullName, action: a.type, err: String(err) },
        'repo action failed; the next pass re-derives it',
      );
    }
  }
}

/** Records the hold, then says so in the PR's one hold comment: a newer head's hold edits the comment an older one posted. */
async function holdProtected(
  deps: ActionDeps,
  facts: RepoFacts,
  a: Extract<RepoAction, { type: 'hold_protected' }>,
): Promise<void> {
  const { store, forge, log } = deps;
  const repo = facts.repo.fullName;
  const earlier = (await store.protectedHolds.list(repo))
    .filter((h) => h.prNumber === a.pr && h.commentId !== null)
    .at(-1);
  await store.protectedHolds.hold({ repo, prNumber: a.pr, headSha: a.sha, files: a.files, recordedAt: deps.now() });
  log.info({ repo, pr: a.pr, sha: a.sha, files: a.files }, 'held an accepted head that changes protected paths');
  const text = protectedHoldNotice(a.pr, a.sha, a.files);
  const id =
    earlier?.commentId && (await forge.editComment(facts.repo, earlier.commentId, text))
      ? earlier.commentId
      : await forge.createComment(facts.repo, a.pr, text);
  await store.protectedHolds.setComment(repo, a.pr, a.sha, id);
}

/**
 * TR14's reads, before the decision: the held heads on record, and for each accepted claim head that
 * changes a protected path and is not yet released, which of its approvers GitHub says can write.
 */
export async function readHolds(deps: Pick<ActionDeps, 'store' | 'forge'>, facts: RepoFacts): Promise<HoldReads> {
  const holds = new Map(
    (await deps.store.protectedHolds.list(facts.repo.fullName)).map((h) => [`${h.prNumber}@${h.headSha}`, h]),
  );
  const writerApprovers = new Map<number, string[]>();
  const readerChangeRequests = new Map<number, string[]>();
  for (const claim of facts.view.claims) {
    if (verdictNow(facts.runs, claim.pull, baseTipOf(facts, claim.pull))?.verdict !== 'accept') continue;
    // TR33: GitHub counts a change request only from someone who can write; so does autoland.
    const requesters = blockingReviewers(claim.reviews, (login) => login === claim.pull.author);
    if (requesters.length)
      readerChangeRequests.set(claim.pull.number, await readersAmong(deps.forge, facts.repo, requesters));
  }
  for (const claim of facts.view.claims) {
    if (
      verdictNow(facts.runs, claim.pull, baseTipOf(facts, claim.pull))?.verdict !== 'accept' ||
      !protectedChangeOf(facts, claim).length
    )
      continue;
    if (holds.get(`${claim.pull.number}@${claim.pull.headSha}`)?.approvedBy) continue;
    const writers: string[] = [];
    for (const login of headApprovers(claim.reviews, claim.pull.headSha, claim.pull.author)) {
      // A permission GitHub would not tell is no approval: the head stays held.
      const permission = await deps.forge.getPermission(facts.repo, login).catch(() => 'none' as const);
      if (canWrite(permission)) writers.push(login);
    }
    writerApprovers.set(claim.pull.number, writers);
  }
  return { holds, writerApprovers, readerChangeRequests };
}
