import { subjectKey, type Candidate, type SpawnStage, type Waiting } from '../candidate.js';
import { readClaim } from './claims.js';
import type { RepoFacts } from '../repo-facts.js';
import type { ClaimView } from '../../forge/types.js';
import type { RunKind } from '../../store/fleet/runs.js';
import { parseSubject } from '../../kernel/ids.js';

// What every producer asks of the facts: a claim's issue, whether a subject is live or held back, and the
// titles the pass read, for the candidates and the work that waits.

/** The issue a claim PR delivers, as its claim records it. */
export const claimedIssue = (facts: RepoFacts, claim: ClaimView): number | null => {
  const reading = readClaim(facts, claim.pull);
  return reading.claimed ? reading.issueNumber : null;
};

export const live = (facts: RepoFacts, subject: string): boolean =>
  facts.liveSubjects.has(subjectKey(facts.repo.fullName, subject));

/**
 * A live subject holds back work of another kind, which then waits `in_flight`.
 * A live run of the very kind that would launch is that work, running: nothing waits.
 */
export const heldBack = (facts: RepoFacts, subject: string, kind: RunKind): boolean =>
  live(facts, subject) && facts.runs.find((r) => r.status === 'live' && r.subject === subject)?.kind !== kind;

/** The title the pass read for `issue#N` or `pr#N`. */
export function titleOf(facts: RepoFacts, subject: string): string | undefined {
  const s = parseSubject(subject);
  const list = s?.kind === 'pr' ? facts.view.pulls : facts.view.issues;
  return list.find((x) => x.number === s?.number)?.title;
}

export const waiting = (facts: RepoFacts, stage: SpawnStage, subject: string, reason: Waiting['reason']): Waiting => {
  const title = titleOf(facts, subject);
  return { repo: facts.repo.fullName, stage, subject, ...(title !== undefined ? { title } : {}), reason };
};

/** A candidate, with the title the pass read for its subject. */
export const titled = (facts: RepoFacts, c: Candidate): Candidate => {
  const title = titleOf(facts, c.subject);
  return title !== undefined ? { ...c, title } : c;
};
