import { makeRefusal } from '../kernel/codes/table.js';
import { pullSubject, type Candidate, type Decided, type Waiting } from './candidate.js';
import { baseRefOf, baseTipOf, type RepoFacts } from './repo-facts.js';
import { isLandable, rejectedHead, rejectToRerun, verdictNow } from './verdicts.js';
import type { ClaimView, PullView } from '../forge/types.js';
import type { Run } from '../store/runs.js';
import { claimedIssue, heldBack, live, titled, waiting } from './producer-parts.js';

// The lander producer's decisions (SP09, LD01, LD02, LD06): which claim PRs want a lander now, on which base,
// and why one that would otherwise get one waits. Pure functions of RepoFacts.

export type LanderDecision =
  { launch: true; requestId: number | null } | { launch: false; why: Waiting['reason'] | null };

/**
 * SP09: no cap term. A claim PR (TR04) at a head with no recorded verdict, nothing in flight; or a land request for a claim PR.
 * A claim that would otherwise get a lander says why it does not (in flight, attempts at this head used up).
 */
export function shouldSpawnLander(facts: RepoFacts, claim: ClaimView, attemptsPerHead: number): LanderDecision {
  const n = claim.pull.number;
  if (!isLandable(facts, claim)) return { launch: false, why: null };
  const wanted = wantsLander(facts, claim, attemptsPerHead);
  if (!wanted.launch) return wanted;
  // Wanted, but its subject is live: its own lander is that work, running; another kind holds it back.
  if (live(facts, pullSubject(n))) {
    return {
      launch: false,
      why: heldBack(facts, pullSubject(n), 'lander')
        ? makeRefusal('in_flight', { repo: facts.repo.fullName, subject: pullSubject(n) })
        : null,
    };
  }
  return wanted;
}

/** Whether a landable claim wants a lander, leaving liveness aside. */
function wantsLander(facts: RepoFacts, claim: ClaimView, attemptsPerHead: number): LanderDecision {
  const n = claim.pull.number;
  const request = facts.requests.find((r) => r.kind === 'land' && r.number === n);
  if (!request && !facts.config.autoland.enabled) return { launch: false, why: null };
  // LD01: a lander judges the head on the base it will land on; where that base is, GitHub must say first.
  const base = baseTipOf(facts, claim.pull);
  if (!base)
    return {
      launch: false,
      why: makeRefusal('base_unread', { repo: facts.repo.fullName, number: n, branch: baseRefOf(facts, claim.pull) }),
    };
  if (request) return { launch: true, requestId: request.id };
  // LD06: a reject of a head accepted before is validated once more before a fix is spent on it.
  const rerun = rejectToRerun(facts.runs, claim.pull);
  // An accept counts on its base only; a reject stands for the head until it changes (LD02).
  if (!rerun && (verdictNow(facts.runs, claim.pull, base) || rejectedHead(facts.runs, claim.pull)))
    return { launch: false, why: null };
  // Landers of this head on this base that ended without a verdict.
  const atHead = facts.runs.filter(
    (r) =>
      r.kind === 'lander' &&
      r.prNumber === n &&
      r.headSha === claim.pull.headSha &&
      r.baseSha === base &&
      r.verdict === null,
  );
  if (atHead.length < attemptsPerHead) return { launch: true, requestId: null };
  return {
    launch: false,
    why: makeRefusal('lander_attempts_used_up', {
      repo: facts.repo.fullName,
      number: n,
      sha: claim.pull.headSha,
      attempts: atHead.length,
    }),
  };
}

export function decideLanders(facts: RepoFacts, attemptsPerHead: number): Decided {
  const out: Candidate[] = [];
  const passed: Waiting[] = [];
  for (const claim of facts.view.claims) {
    const decision = shouldSpawnLander(facts, claim, attemptsPerHead);
    if (!decision.launch) {
      if (decision.why) passed.push(waiting(facts, 'lander', pullSubject(claim.pull.number), decision.why));
      continue;
    }
    const { requestId } = decision;
    out.push({
      stage: 'lander',
      repo: facts.repo.fullName,
      installationId: facts.repo.installationId,
      kind: 'lander',
      subject: pullSubject(claim.pull.number),
      issueNumber: claimedIssue(facts, claim),
      prNumber: claim.pull.number,
      headSha: claim.pull.headSha,
      baseSha: baseTipOf(facts, claim.pull),
      budgetMinutes: facts.config.budget_minutes.lander,
      requestId,
      why: requestId
        ? 'land requested'
        : rejectToRerun(facts.runs, claim.pull)
          ? 'a reject of a head accepted before: validated once more before a fix (LD06)'
          : 'claim PR has no verdict at its head',
    });
  }
  return { candidates: out.map((c) => titled(facts, c)), waiting: passed };
}

/**
 * LD01-LD06, for the repository page's landing queue: where one claim PR stands, in words, from the landers of
 * its head and where its base branch is. Pure.
 */
export function landingState(
  runs: readonly Run[],
  pull: Pick<PullView, 'number' | 'headSha'>,
  base: string | null | undefined,
): string {
  const short = (sha: string) => sha.slice(0, 7);
  const atHead = runs.filter((r) => r.kind === 'lander' && r.prNumber === pull.number && r.headSha === pull.headSha);
  const live = atHead.find((r) => r.status === 'live');
  if (live)
    return `being validated on ${live.baseSha ? short(live.baseSha) : 'no base'}${rejectToRerun(runs, pull) ? ' (once more: a reject of a head accepted before)' : ''}`;
  if (!base) return 'waits for GitHub to say where its base branch is';
  const now = verdictNow(runs, pull, base);
  if (now?.verdict === 'accept')
    return `accepted on ${short(base)}: lands unless a review or a protected path holds it`;
  if (rejectToRerun(runs, pull)) return 'rejected after an accept: waits to be validated once more (LD06)';
  if (rejectedHead(runs, pull)) {
    const r = atHead.filter((x) => x.verdict === 'reject').at(-1)!;
    return `rejected on ${r.baseSha ? short(r.baseSha) : 'no base'}: waits for a fix (or a new push, or /yoke land)`;
  }
  const old = atHead.filter((r) => r.verdict === 'accept').at(-1);
  if (old)
    return `accepted on ${old.baseSha ? short(old.baseSha) : 'no base'}; the base moved to ${short(base)}: waits for a lander there`;
  return `waits for a lander on ${short(base)}`;
}
