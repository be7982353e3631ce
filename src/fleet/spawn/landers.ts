import { makeRefusal } from '../../kernel/codes/table.js';
import type { Candidate, Decided, Waiting } from '../candidate.js';
import { pullSubject } from '../../kernel/ids.js';
import { baseRefOf, baseTipOf, landingRecord, type RepoFacts } from '../repo-facts.js';
import { isLandable, rejectedHead, rejectToRerun, verdictNow } from './verdicts.js';
import type { ClaimView, MergeQueueRead, PullView } from '../../forge/types.js';
import { groupOf, groupPosition, queuedAt } from '../merge-queue.js';
import type { Run } from '../../store/fleet/runs.js';
import type { StackMember } from '../../store/fleet/stack-column.js';
import { claimedIssue, heldBack, live, titled, waiting } from './producer-parts.js';
import { blockingReviewers, protectedChangeOf } from './protected-paths.js';
import { landersAt, landersOn, ownVerdicts, stackWords, type LandingRecord, type Position } from '../stacks.js';

// The lander producer's decisions (SP09, LD01, LD02, LD05, LD06): which claim PRs want a lander now, on which
// tree, and why one that would otherwise get one waits. Pure functions of RepoFacts.
//
// LD05: the claim PRs that autoland may merge queue on their base branch, oldest first. Each is validated on
// the base with the ones ahead of it stacked on (as GitHub's merge queue builds its groups), up to
// autoland.stack_depth deep, so a fleet's PRs are validated at once rather than one merge after another. A
// stack whose lower part is rejected splits: the PR to blame is the lowest whose own stack is rejected on a
// tree a lander accepted; the rest are validated again without it.

export type LanderDecision =
  | {
      launch: true;
      requestId: number | null;
      on: Position;
      /** LD04: the merge group commit GitHub's queue built, which the lander judges as it is. */
      landSha?: string;
      why: string;
    }
  | { launch: false; why: Waiting['reason'] | null };

/** Whether a claim PR queues to be stacked: autoland may merge it as soon as it is accepted (TR14, SP18). */
function queues(facts: RepoFacts, claim: ClaimView): boolean {
  return (
    facts.config.autoland.enabled &&
    protectedChangeOf(facts, claim).length === 0 &&
    blockingReviewers(
      claim.reviews,
      (login) => login === claim.pull.author || facts.trustedLogins.has(login.toLowerCase()),
    ).length === 0
  );
}

/**
 * SP09: no cap term. Every landable claim PR, branch by branch and oldest first: a lander for it now (on which
 * tree), or why it waits (null: nothing to say). A claim PR that queues is judged on the stack of those ahead
 * of it; one that does not (autoland off and `/yoke land` asked, a protected change, a change request) alone
 * on its base.
 */
/** What each lander decision of a repository reads: its facts, what its landers judged and merged, and the attempts a head gets. */
interface Judging {
  facts: RepoFacts;
  record: LandingRecord;
  attemptsPerHead: number;
}

export function planLanders(facts: RepoFacts, attemptsPerHead: number): Map<number, LanderDecision> {
  const out = new Map<number, LanderDecision>();
  const record = landingRecord(facts);
  const landable = facts.view.claims.filter((c) => isLandable(facts, c)).sort((a, b) => a.pull.number - b.pull.number);
  const stacked = (c: ClaimView) =>
    !facts.requests.some((r) => r.kind === 'land' && r.number === c.pull.number) &&
    queues(facts, c) &&
    (rejectToRerun(record, c.pull) || !rejectedHead(record, c.pull));
  for (const branch of new Set(landable.map((c) => baseRefOf(facts, c.pull)))) {
    const group = landable.filter((c) => baseRefOf(facts, c.pull) === branch);
    if (facts.mergeQueues?.has(branch)) {
      // LD04: GitHub's merge queue does the batching here.
      const read = facts.mergeQueues.get(branch) ?? null;
      for (const claim of group)
        out.set(claim.pull.number, decideQueued({ facts, record, attemptsPerHead }, claim, read));
      continue;
    }
    const tip = baseTipOf(facts, { baseRef: branch });
    const queue = tip ? stackOrder(record, tip, group.filter(stacked)) : group.filter(stacked);
    const below: StackMember[] = [];
    for (const claim of [...queue, ...group.filter((c) => !stacked(c))]) {
      const decision = decideOne({ facts, record, attemptsPerHead }, claim, stacked(claim) ? below : null);
      out.set(claim.pull.number, decision.decision);
      if (decision.stacks) below.push({ pr: claim.pull.number, head: claim.pull.headSha });
    }
  }
  return out;
}

/**
 * LD05: the queue's order on a branch at `tip`: first the chain of PRs accepted (or being validated) each on the
 * stack of those before it, as the merges will take them; then the rest, oldest first. A PR already accepted on
 * the base as it is goes first, so it lands now rather than waiting under a new stack.
 */
function stackOrder(record: LandingRecord, tip: string, queued: readonly ClaimView[]): ClaimView[] {
  const rest = [...queued];
  const chain: ClaimView[] = [];
  const stack: StackMember[] = [];
  for (;;) {
    const next = rest.find((c) => {
      const judged = landersOn(record, c.pull, { root: tip, stack });
      return (
        judged.some((r) => r.status === 'live') || judged.filter((r) => r.verdict !== null).at(-1)?.verdict === 'accept'
      );
    });
    if (!next) return [...chain, ...rest];
    rest.splice(rest.indexOf(next), 1);
    chain.push(next);
    stack.push({ pr: next.pull.number, head: next.pull.headSha });
  }
}

/** One claim PR's decision; `below` is the stack it goes on, or null for one judged alone on its base. */
function decideOne(
  judging: Judging,
  claim: ClaimView,
  below: readonly StackMember[] | null,
): { decision: LanderDecision; stacks: boolean } {
  const { facts, record, attemptsPerHead } = judging;
  const n = claim.pull.number;
  const repo = facts.repo.fullName;
  const request = facts.requests.find((r) => r.kind === 'land' && r.number === n);
  const none = (why: Waiting['reason'] | null = null) => ({ decision: { launch: false as const, why }, stacks: false });
  if (!request && !facts.config.autoland.enabled) return none();
  // LD01: a lander judges the head on the base it will land on; where that base is, GitHub must say first.
  const tip = baseTipOf(facts, claim.pull);
  if (!tip) return none(makeRefusal('base_unread', { repo, number: n, branch: baseRefOf(facts, claim.pull) }));
  const rerun = rejectToRerun(record, claim.pull);
  const stacked = below !== null;
  const on: Position = { root: tip, stack: [...(below ?? [])] };
  const judged = landersOn(record, claim.pull, on);
  const liveHere = judged.some((r) => r.status === 'live');
  // Its subject is live: its own lander is that work, running; another kind (a fix) holds it back.
  if (live(facts, pullSubject(n))) {
    const held = heldBack(facts, pullSubject(n), 'lander');
    return {
      decision: { launch: false, why: held ? makeRefusal('in_flight', { repo, subject: pullSubject(n) }) : null },
      // A lander judging it on this stack, in flight: the PRs behind it stack on it, as if it will pass.
      stacks: stacked && liveHere,
    };
  }
  if (request) return { decision: { launch: true, requestId: request.id, on, why: 'land requested' }, stacks: false };
  if (!stacked && rejectedHead(record, claim.pull) && !rerun) return none();
  if (stacked && below.length >= facts.config.autoland.stack_depth)
    return none(
      makeRefusal('stack_full', {
        repo,
        number: n,
        ahead: stackWords(below),
        depth: facts.config.autoland.stack_depth,
      }),
    );
  const last = judged.filter((r) => r.verdict !== null).at(-1);
  // An accept counts on the tree it judged only (LD02); the PRs behind it stack on it.
  if (last?.verdict === 'accept') return { decision: { launch: false, why: null }, stacks: stacked };
  // LD06: a reject of a head accepted before is validated once more before a fix is spent on it. Any other reject
  // on this very tree stands (LD05: one of a stack whose lower part failed too blames nobody, and is not re-run).
  if (last?.verdict === 'reject' && !(rerun && judged.filter((r) => r.verdict === 'reject').length < 2)) return none();
  // Landers of this head on this tree that ended without a verdict.
  const failed = judged.filter((r) => r.verdict === null).length;
  if (failed >= attemptsPerHead)
    return none(makeRefusal('lander_attempts_used_up', { repo, number: n, sha: claim.pull.headSha, attempts: failed }));
  const why = rerun
    ? 'a reject of a head accepted before: validated once more before a fix (LD06)'
    : on.stack.length
      ? `claim PR has no verdict on its base with ${stackWords(on.stack)} ahead of it (LD05)`
      : 'claim PR has no verdict at its head';
  return { decision: { launch: true, requestId: null, on, why }, stacks: stacked };
}

/**
 * LD04: one claim PR on a branch where GitHub's merge queue is required. In the queue with a merge group built:
 * a lander for the group's commit, once (GitHub merges or drops it on that verdict). In the queue without one:
 * it waits for GitHub. Out of it: validated alone on the base, to be queued on an accept; a group's reject of a
 * head accepted before is validated once more on the tree that group was (LD06).
 */
function decideQueued(judging: Judging, claim: ClaimView, read: MergeQueueRead | null): LanderDecision {
  const { facts, record, attemptsPerHead } = judging;
  const n = claim.pull.number;
  const repo = facts.repo.fullName;
  const branch = baseRefOf(facts, claim.pull);
  if (!read) return { launch: false, why: makeRefusal('merge_queue_unread', { repo, number: n, branch }) };
  const tip = baseTipOf(facts, claim.pull);
  if (!tip) return { launch: false, why: makeRefusal('base_unread', { repo, number: n, branch }) };
  const group = groupOf(read, claim.pull);
  if (live(facts, pullSubject(n))) {
    const held = heldBack(facts, pullSubject(n), 'lander');
    return { launch: false, why: held ? makeRefusal('in_flight', { repo, subject: pullSubject(n) }) : null };
  }
  if (group) {
    const judged = landersAt(record.runs, claim.pull).filter((r) => r.landSha === group.sha);
    if (judged.some((r) => r.verdict !== null)) return { launch: false, why: null };
    if (judged.length >= attemptsPerHead)
      return {
        launch: false,
        why: makeRefusal('lander_attempts_used_up', {
          repo,
          number: n,
          sha: claim.pull.headSha,
          attempts: judged.length,
        }),
      };
    const on = groupPosition(read, group, tip);
    return {
      launch: true,
      requestId: null,
      on,
      landSha: group.sha,
      why: `GitHub's merge queue built a merge group for it${on.stack.length ? ` after ${stackWords(on.stack)}` : ''}: its commit is validated as it would land (LD04)`,
    };
  }
  if (queuedAt(read, claim.pull)) return { launch: false, why: null };
  const last = ownVerdicts(record, claim.pull).at(-1);
  if (last?.verdict === 'reject' && last.landSha && last.baseSha && rejectToRerun(record, claim.pull)) {
    const on: Position = { root: last.baseSha, stack: last.stack };
    if (landersOn(record, claim.pull, on).filter((r) => r.verdict === 'reject').length < 2)
      return {
        launch: true,
        requestId: null,
        on,
        why: "a reject of a head accepted before, in GitHub's merge queue: validated once more before a fix (LD06)",
      };
  }
  return decideOne({ facts, record, attemptsPerHead }, claim, null).decision;
}

export function decideLanders(facts: RepoFacts, attemptsPerHead: number): Decided {
  const out: Candidate[] = [];
  const passed: Waiting[] = [];
  const plan = planLanders(facts, attemptsPerHead);
  for (const claim of facts.view.claims) {
    const decision = plan.get(claim.pull.number);
    if (!decision) continue;
    if (!decision.launch) {
      if (decision.why) passed.push(waiting(facts, 'lander', pullSubject(claim.pull.number), decision.why));
      continue;
    }
    out.push({
      stage: 'lander',
      repo: facts.repo.fullName,
      installationId: facts.repo.installationId,
      kind: 'lander',
      subject: pullSubject(claim.pull.number),
      issueNumber: claimedIssue(facts, claim),
      prNumber: claim.pull.number,
      headSha: claim.pull.headSha,
      baseSha: decision.on.root,
      stack: decision.on.stack,
      ...(decision.landSha ? { landSha: decision.landSha } : {}),
      budgetMinutes: facts.config.budget_minutes.lander,
      requestId: decision.requestId,
      why: decision.why,
    });
  }
  // Stacks build on the PRs below them: the oldest goes first.
  out.sort((a, b) => (a.prNumber ?? 0) - (b.prNumber ?? 0));
  return { candidates: out.map((c) => titled(facts, c)), waiting: passed };
}

/**
 * LD01-LD06, for the repository page's landing queue: where one claim PR stands, in words, from the landers of
 * its head, yoke's merges and where its base branch is: what it is validated together with, what it waits
 * for, and whether it was split out of a stack. Pure.
 */
export function landingState(
  record: LandingRecord,
  pull: Pick<PullView, 'number' | 'headSha'>,
  base: string | null | undefined,
  queue: { queued: boolean; group: string | null } | null = null,
): string {
  const short = (sha: string) => sha.slice(0, 7);
  const where = (r: Run) =>
    `${r.baseSha ? short(r.baseSha) : 'no base'}${r.stack.length ? ` together with ${stackWords(r.stack)} below it` : ''}`;
  const atHead = landersAt(record.runs, pull);
  // LD04: in GitHub's merge queue, where it stands is its merge group's.
  if (queue?.group) {
    const onGroup = atHead.filter((r) => r.landSha === queue.group);
    const ahead = onGroup.at(-1)?.stack.length ? ` after ${stackWords(onGroup.at(-1)!.stack)}` : '';
    const group = `its merge group ${short(queue.group)}${ahead} in GitHub's merge queue`;
    if (onGroup.some((r) => r.status === 'live')) return `${group} is being validated`;
    const judged = onGroup.filter((r) => r.verdict !== null).at(-1);
    if (judged?.verdict === 'accept') return `${group} is accepted: GitHub merges it`;
    if (judged?.verdict === 'reject') return `${group} is rejected: GitHub's merge queue lets it go`;
    return `${group} waits for a lander`;
  }
  if (queue?.queued) return "in GitHub's merge queue: waits for GitHub to build its merge group";
  const live = atHead.find((r) => r.status === 'live');
  if (live)
    return `being validated on ${where(live)}${rejectToRerun(record, pull) ? ' (once more: a reject of a head accepted before)' : ''}`;
  if (!base) return 'waits for GitHub to say where its base branch is';
  if (verdictNow(record, pull, base)?.verdict === 'accept')
    return `accepted on ${short(base)}: lands unless a review or a protected path holds it`;
  if (rejectToRerun(record, pull)) return 'rejected after an accept: waits to be validated once more (LD06)';
  const own = ownVerdicts(record, pull);
  if (rejectedHead(record, pull))
    return `rejected on ${where(own.at(-1)!)}: waits for a fix (or a new push, or /yoke land)`;
  const last = atHead.filter((r) => r.verdict !== null).at(-1);
  if (last?.verdict === 'reject')
    return `split out: rejected on ${where(last)}, where a PR below it is rejected too; waits to be validated without it`;
  if (last?.verdict === 'accept' && last.stack.length) return `accepted on ${where(last)}: lands right after them`;
  if (last) return `accepted on ${where(last)}; the base moved to ${short(base)}: waits for a lander there`;
  return `waits for a lander on ${short(base)}`;
}

/** LD05: one stack being validated now: the claim PRs in it, bottom first, and the base they are merged onto. */
export interface StackInFlight {
  base: string;
  prs: number[];
}

/**
 * LD05, for the repository page: what is being validated together now. Each live lander judges its PR on top
 * of the PRs below it; a stack that is the lower part of a longer live one is shown within it. Pure.
 */
export function stacksInFlight(runs: readonly Run[]): StackInFlight[] {
  const live = runs
    .filter((r) => r.kind === 'lander' && r.status === 'live' && r.baseSha && r.prNumber !== null)
    .map((r) => ({ base: r.baseSha!, prs: [...r.stack.map((m) => m.pr), r.prNumber!] }));
  const within = (a: StackInFlight, b: StackInFlight) =>
    a !== b && a.base === b.base && a.prs.length < b.prs.length && a.prs.every((n, i) => b.prs[i] === n);
  return live.filter((s) => s.prs.length > 1 && !live.some((t) => within(s, t)));
}
