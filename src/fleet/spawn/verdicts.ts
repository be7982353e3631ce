import { decodeMarker } from '../../forge/marker.js';
import type { ClaimView, CommentView, PullView } from '../../forge/types.js';
import type { Run, Verdict } from '../../store/fleet/runs.js';
import { readClaim } from './claims.js';
import type { RepoFacts } from '../repo-facts.js';
import { landersOn, ownVerdicts, type LandingRecord, type Position } from '../stacks.js';

// TR01: the verdict that counts is the one a lander run of yoke's reported,
// authenticated, for the PR's current head, as the runs store recorded it.
// Marker comments are its public record; one that disagrees with the record
// (edited, copied, replayed, or written by someone else) changes nothing.

export interface RecordedVerdict {
  verdict: Verdict;
  runId: string;
}

/**
 * LD02: the latest verdict recorded by a lander run of this PR at its current head, on the base its branch is
 * at now (`base`, read this pass): the head alone on that commit, or on a stack yoke has since landed there
 * (LD05). A verdict on another tree counts for nothing here, and nothing counts while the base is unknown.
 */
export function verdictNow(
  record: LandingRecord,
  pull: Pick<PullView, 'number' | 'headSha'>,
  base: string | null,
): RecordedVerdict | null {
  return base ? verdictOn(record, pull, { root: base, stack: [] }) : null;
}

/** LD05: the latest verdict on the head merged onto exactly this tree (a base, with a stack of heads on it). */
export function verdictOn(
  record: LandingRecord,
  pull: Pick<PullView, 'number' | 'headSha'>,
  on: Position,
): RecordedVerdict | null {
  const last = landersOn(record, pull, on)
    .filter((r) => r.verdict !== null)
    .at(-1);
  return last ? { verdict: last.verdict!, runId: last.id } : null;
}

/** Whether the head's latest own verdict, on whatever tree, is an accept (TR14 holds it for a person from then). */
export const acceptedHead = (record: LandingRecord, pull: Pick<PullView, 'number' | 'headSha'>): boolean =>
  ownVerdicts(record, pull).at(-1)?.verdict === 'accept';

/**
 * LD02: whether the head stands rejected. Unlike an accept, a reject stands for its head on whatever base it was
 * judged: the head is repaired (a fix, SP19) or validated again on request (`/yoke land`), never re-run on each
 * new base while it waits. Only a reject the head is to blame for counts (LD05: not one of a stack whose lower
 * part failed too).
 */
export function rejectedHead(record: LandingRecord, pull: Pick<PullView, 'number' | 'headSha'>): boolean {
  return ownVerdicts(record, pull).at(-1)?.verdict === 'reject';
}

/**
 * LD06: a reject of a head a lander accepted before (the base moved, or the test is flaky) is not taken as the
 * agent's fault blindly: the head is validated once more before a fix is spent on it. Only a reject repeated
 * by that re-run stands.
 */
export function rejectToRerun(record: LandingRecord, pull: Pick<PullView, 'number' | 'headSha'>): boolean {
  const judged = ownVerdicts(record, pull);
  const [before, last] = judged.slice(-2);
  return last?.verdict === 'reject' && before?.verdict !== 'reject' && judged.some((r) => r.verdict === 'accept');
}

/** LD06: the head's verdict flipped: accepted, then rejected, then accepted by the re-run. The check is flaky. */
export function flippedVerdict(record: LandingRecord, run: Pick<Run, 'id' | 'prNumber' | 'headSha'>): boolean {
  const judged = ownVerdicts(record, { number: run.prNumber ?? -1, headSha: run.headSha ?? '' });
  const at = judged.findIndex((r) => r.id === run.id);
  return (
    at >= 2 &&
    judged[at]!.verdict === 'accept' &&
    judged[at - 1]!.verdict === 'reject' &&
    judged.slice(0, at - 1).some((r) => r.verdict === 'accept')
  );
}

export interface IgnoredMarker {
  commentId: number;
  author: string;
  reason: string;
}

/** Marker comments that are not a faithful record of a verdict yoke holds. */
export function untrustedMarkers(
  facts: Pick<RepoFacts, 'runs' | 'trustedLogins'>,
  pr: number,
  comments: readonly CommentView[],
): IgnoredMarker[] {
  const out: IgnoredMarker[] = [];
  for (const c of comments) {
    const decoded = decodeMarker(c.body);
    if (decoded.kind === 'none') continue;
    if (!facts.trustedLogins.has(c.author.toLowerCase())) {
      out.push({ commentId: c.id, author: c.author, reason: `written by ${c.author}, not by yoke` });
      continue;
    }
    if (decoded.kind === 'invalid') {
      out.push({ commentId: c.id, author: c.author, reason: decoded.reason });
      continue;
    }
    const { run: runId, sha, verdict } = decoded.payload;
    const run = facts.runs.find((r) => r.id === runId);
    if (!run || run.kind !== 'lander' || run.prNumber !== pr || run.headSha !== sha || run.verdict !== verdict) {
      out.push({
        commentId: c.id,
        author: c.author,
        reason: `says ${verdict} for run ${runId} at ${sha.slice(0, 7)}, which is not the verdict yoke recorded`,
      });
    }
  }
  return out;
}

/** A claim PR that may be landed: claimed (TR04) and not a draft. */
export const isLandable = (facts: RepoFacts, claim: ClaimView): boolean =>
  !claim.pull.draft && readClaim(facts, claim.pull).claimed;
