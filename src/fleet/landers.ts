import { makeRefusal } from '../kernel/codes/table.js';
import { pullSubject, type Candidate, type Decided, type Waiting } from './candidate.js';
import { baseRefOf, baseTipOf, type RepoFacts } from './repo-facts.js';
import { isLandable, rejectedHead, rejectToRerun, verdictNow } from './verdicts.js';
import type { ClaimView } from '../forge/types.js';
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
