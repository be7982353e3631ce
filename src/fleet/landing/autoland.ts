import type { ClaimView, Forge, ReviewView } from '../../forge/types.js';
import { canWrite } from '../../kernel/permission.js';
import type { Io } from '../context.js';
import { executeMerge, planMerges, type MergeListener, type AfterLaunch, type MergeAction } from './merges.js';
import { fixExhaustedNotice, protectedApprovedNotice, protectedHoldNotice } from '../notices/messages.js';
import type { ProtectedHold } from '../../store/fleet/protected-holds.js';
import { blockingReviewers, headApprovers, protectedChangeOf } from '../spawn/protected-paths.js';
import { subjectKey } from '../candidate.js';
import { pullSubject } from '../../kernel/ids.js';
import { shouldSpawnFix } from '../spawn/producers.js';
import { fixAsksOf } from '../spawn/asks.js';
import { askedBy } from '../spawn/asks.js';
import { readClaim } from '../spawn/claims.js';
import { CLAIM_LABEL, STUCK_LABEL, landingRecord, type RepoFacts } from '../repo-facts.js';
import { acceptedHead, isLandable, rejectedHead, untrustedMarkers } from '../spawn/verdicts.js';
import type { Landed } from '../stacks.js';
import { errorStack } from '../../kernel/error-text.js';

// What a pass does besides launching, decided purely from RepoFacts:
// record claims (and label them, for display), merge heads whose recorded
// verdict is accept, and tell maintainers when fix-forward has run out.
// Executed after the decisions.

export type RepoAction =
  | { type: 'record_claim'; pr: number; run: string; issue: number }
  | { type: 'label_claim'; pr: number; run: string }
  | MergeAction
  | { type: 'fix_exhausted'; pr: number; attempts: number; askedBy: string | null }
  | { type: 'hold_protected'; pr: number; sha: string; files: string[] }
  /** TR14: an accepted head whose change touches no protected path: its check may now say success. */
  | { type: 'clear_head'; pr: number; sha: string }
  | { type: 'approve_hold'; pr: number; sha: string; files: string[]; by: string; commentId: number | null }
  | { type: 'ignored_marker'; pr: number; commentId: number; author: string; reason: string };

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

export function planRepoActions(facts: RepoFacts, after: AfterLaunch, reads: HoldReads = NO_HOLD_READS): RepoAction[] {
  const actions: RepoAction[] = [];
  for (const pull of facts.view.pulls) {
    const claim = readClaim(facts, pull);
    if (!claim.claimed) continue;
    if (!claim.recorded)
      actions.push({ type: 'record_claim', pr: pull.number, run: claim.runId, issue: claim.issueNumber });
    if (!pull.labels.includes(CLAIM_LABEL)) actions.push({ type: 'label_claim', pr: pull.number, run: claim.runId });
  }
  const record = landingRecord(facts);
  const mergeable: ClaimView[] = [];
  for (const claim of facts.view.claims) {
    for (const ig of untrustedMarkers(facts, claim.pull.number, claim.comments))
      actions.push({ type: 'ignored_marker', pr: claim.pull.number, ...ig });
    if (!isLandable(facts, claim)) continue;
    const n = claim.pull.number;
    // TR14: an accepted head that changes what yoke trusts waits for a writer's approval of that head.
    let released = true;
    if (acceptedHead(record, claim.pull)) {
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
      released &&
      facts.config.autoland.enabled &&
      !after.liveSubjects.has(subjectKey(facts.repo.fullName, pullSubject(n))) &&
      !hasBlockingReview(facts, claim.reviews, claim.pull.author, reads.readerChangeRequests.get(n) ?? [])
    )
      mergeable.push(claim);
    if (shouldSpawnFix(facts, claim) === 'exhausted' && !claim.pull.labels.includes(STUCK_LABEL)) {
      // TR33: a fix only writers asked for says who asked, and what they can do instead.
      const rejected = rejectedHead(record, claim.pull) && facts.config.fix_forward.enabled;
      const asks = fixAsksOf(facts, claim);
      actions.push({
        type: 'fix_exhausted',
        pr: n,
        attempts: facts.config.fix_forward.max_attempts,
        askedBy: !rejected && asks.length ? askedBy(asks) : null,
      });
    }
  }
  actions.push(...planMerges(facts, record, mergeable, after));
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

export async function executeRepoActions(
  deps: Io & { onMerged?: MergeListener },
  facts: RepoFacts,
  actions: readonly RepoAction[],
): Promise<void> {
  const { forge, store, log } = deps;
  // LD05: yoke's merges so far, this pass's included, to know a stack judged on a base for the commit it made.
  const landed: Landed[] = [...(facts.merges ?? [])];
  for (const a of actions) {
    try {
      if (a.type === 'record_claim') {
        await store.claims.record({
          repo: facts.repo.fullName,
          prNumber: a.pr,
          runId: a.run,
          issueNumber: a.issue,
          recordedAt: deps.clock.now(),
        });
      } else if (a.type === 'label_claim') {
        await forge.addLabels(facts.repo, a.pr, [CLAIM_LABEL]);
      } else if (a.type === 'merge') {
        await executeMerge(deps, facts, a, landed);
      } else if (a.type === 'clear_head') {
        await store.protectedHolds.hold({
          repo: facts.repo.fullName,
          prNumber: a.pr,
          headSha: a.sha,
          files: [],
          recordedAt: deps.clock.now(),
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
        { repo: facts.repo.fullName, action: a.type, err: errorStack(err) },
        'repo action failed; the next pass re-derives it',
      );
    }
  }
}

/** Records the hold, then says so in the PR's one hold comment: a newer head's hold edits the comment an older one posted. */
async function holdProtected(
  deps: Io & { onMerged?: MergeListener },
  facts: RepoFacts,
  a: Extract<RepoAction, { type: 'hold_protected' }>,
): Promise<void> {
  const { store, forge, log } = deps;
  const repo = facts.repo.fullName;
  const earlier = (await store.protectedHolds.list(repo))
    .filter((h) => h.prNumber === a.pr && h.commentId !== null)
    .at(-1);
  await store.protectedHolds.hold({
    repo,
    prNumber: a.pr,
    headSha: a.sha,
    files: a.files,
    recordedAt: deps.clock.now(),
  });
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
export async function readHolds(deps: Pick<Io, 'store' | 'forge'>, facts: RepoFacts): Promise<HoldReads> {
  const holds = new Map(
    (await deps.store.protectedHolds.list(facts.repo.fullName)).map((h) => [`${h.prNumber}@${h.headSha}`, h]),
  );
  const writerApprovers = new Map<number, string[]>();
  const readerChangeRequests = new Map<number, string[]>();
  for (const claim of facts.view.claims) {
    if (!acceptedHead(landingRecord(facts), claim.pull)) continue;
    // TR33: GitHub counts a change request only from someone who can write; so does autoland.
    const requesters = blockingReviewers(claim.reviews, (login) => login === claim.pull.author);
    if (requesters.length)
      readerChangeRequests.set(claim.pull.number, await readersAmong(deps.forge, facts.repo, requesters));
  }
  for (const claim of facts.view.claims) {
    if (!acceptedHead(landingRecord(facts), claim.pull) || !protectedChangeOf(facts, claim).length) continue;
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
