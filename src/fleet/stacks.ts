import type { MergeRecord } from '../store/fleet/merges.js';
import type { Run } from '../store/fleet/runs.js';
import type { StackMember } from '../store/fleet/stack-column.js';

// LD05: the trees landers judge, named as a commit of the base branch with claim PR heads merged onto it in
// order. yoke's own merges turn a stack into a commit: a stack judged on B whose first member yoke then merged
// onto B (making M) is the same tree as that stack's rest on M. That is what lets a lander started on top of a
// stack still in flight count once the stack below it lands, and what makes every tree yoke lands one a
// lander accepted. Pure functions of the runs and merges on record.

/** A tree a lander may judge: `root`, a commit, with `stack` merged onto it in order. */
export interface Position {
  root: string;
  stack: readonly StackMember[];
}

/** What a decision reads of yoke's merges: which head it merged onto which commit, making which. */
export type Landed = Pick<MergeRecord, 'prNumber' | 'headSha' | 'state' | 'baseSha' | 'mergeSha' | 'runId' | 'detail'>;

/** LD03: GitHub's answer to a branch update that is not a fast-forward (the base moved, or a commit grew elsewhere). */
export const NOT_FAST_FORWARD = /fast.?forward/i;

/**
 * LD03: a lander whose commit GitHub would not fast-forward the branch to, though the branch was at the tree it
 * judged (the commit grew from another commit of the same tree): its verdict lands nothing, and counts for nothing.
 */
const voided = (merges: readonly Landed[], run: Run): boolean =>
  merges.some((m) => m.state === 'refused' && m.runId === run.id && NOT_FAST_FORWARD.test(m.detail ?? ''));

/** What a decision about stacks looks at: the repository's runs and yoke's merges there. */
export interface LandingRecord {
  runs: readonly Run[];
  merges: readonly Landed[];
}

/** The position with every member yoke has since merged, in order, folded into the commit its merge made. */
export function normalize(pos: Position, merges: readonly Landed[]): Position {
  let root = pos.root;
  let i = 0;
  for (; i < pos.stack.length; i++) {
    const m = pos.stack[i]!;
    const hit = merges.find(
      (x) => x.state === 'merged' && x.prNumber === m.pr && x.headSha === m.head && x.baseSha === root && x.mergeSha,
    );
    if (!hit) break;
    root = hit.mergeSha!;
  }
  return { root, stack: pos.stack.slice(i) };
}

const sameMember = (a: StackMember, b: StackMember): boolean => a.pr === b.pr && a.head === b.head;

/** Whether two positions are the same tree, once yoke's merges are folded in. */
export function samePosition(a: Position, b: Position, merges: readonly Landed[]): boolean {
  const x = normalize(a, merges);
  const y = normalize(b, merges);
  return x.root === y.root && x.stack.length === y.stack.length && x.stack.every((m, i) => sameMember(m, y.stack[i]!));
}

/** Where a lander's own head was merged: its base with its stack (null: a lander that named no base). */
const positionOf = (run: Pick<Run, 'baseSha' | 'stack'>): Position | null =>
  run.baseSha ? { root: run.baseSha, stack: run.stack } : null;

/** The landers of this PR at this head, oldest first. */
export const landersAt = (runs: readonly Run[], pull: { number: number; headSha: string }): Run[] =>
  runs.filter((r) => r.kind === 'lander' && r.prNumber === pull.number && r.headSha === pull.headSha);

/** The landers of this head that judged it on this position (the same tree below it). */
export function landersOn(record: LandingRecord, pull: { number: number; headSha: string }, pos: Position): Run[] {
  return landersAt(record.runs, pull).filter((r) => {
    const at = positionOf(r);
    return at !== null && samePosition(at, pos, record.merges) && !voided(record.merges, r);
  });
}

/**
 * Whether the tree at `pos` is one a lander accepted: a commit of the branch (its stack folded away, or none),
 * or the stack's top accepted on the position below it.
 */
function acceptedPosition(record: LandingRecord, pos: Position): boolean {
  const norm = normalize(pos, record.merges);
  const top = norm.stack.at(-1);
  if (!top) return true;
  const below = { root: norm.root, stack: norm.stack.slice(0, -1) };
  return landersOn(record, { number: top.pr, headSha: top.head }, below).some((r) => r.verdict === 'accept');
}

/**
 * LD05: whether a lander's reject is its own head's fault: it judged its head on a tree a lander accepted (a
 * commit of the branch, or a stack accepted whole). A reject of a stack whose lower part also failed, or is not
 * judged yet, blames nobody: the stack is split, and the head is judged again nearer the base.
 */
function blamed(record: LandingRecord, run: Run): boolean {
  const pos = positionOf(run);
  return pos === null || acceptedPosition(record, pos);
}

/** The verdicts that are this head's own: every accept, and the rejects it is to blame for; oldest first. */
export const ownVerdicts = (record: LandingRecord, pull: { number: number; headSha: string }): Run[] =>
  landersAt(record.runs, pull).filter((r) => r.verdict === 'accept' || (r.verdict === 'reject' && blamed(record, r)));

/** A stack in words: `#12, #15`. */
export const stackWords = (stack: readonly StackMember[]): string => stack.map((m) => `#${m.pr}`).join(', ');
