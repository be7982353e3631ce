import type { MergeGroup, MergeQueueRead, PullView } from '../forge/types.js';
import type { StackMember } from '../store/fleet/stack-column.js';
import type { Position } from './stacks.js';

// LD04: where a ruleset requires GitHub's merge queue, GitHub does the batching: yoke validates each accepted
// claim PR alone on its base, adds it to the queue, and validates every merge group GitHub builds (a commit:
// the base, the PRs ahead in the queue, then this PR, merged in order). GitHub merges a group only once its
// required checks pass on that very commit, and yoke's lander writes yoke/lander there. Pure functions of the
// queue as read this pass.

/** Whether this PR is in the queue at this head (GitHub drops a PR from the queue when its head moves). */
export const queuedAt = (read: MergeQueueRead, pull: Pick<PullView, 'number' | 'headSha'>): boolean =>
  read.entries.some((e) => e.pr === pull.number && e.headSha === pull.headSha);

/**
 * The merge groups of PRs among the queue's entries at their heads. A `gh-readonly-queue/<branch>/pr-<n>-<head>`
 * ref is only a name: one for a PR the queue does not hold (made by anyone who can push, or left behind) is no
 * group of GitHub's, and gets no lander.
 */
const queuedGroups = (read: MergeQueueRead): MergeGroup[] =>
  read.groups.filter((g) => queuedAt(read, { number: g.pr, headSha: g.headSha }));

/** The merge group GitHub built for this PR at this head, if any, while the queue holds it at that head. */
export const groupOf = (read: MergeQueueRead, pull: Pick<PullView, 'number' | 'headSha'>): MergeGroup | null =>
  queuedGroups(read).find((g) => g.pr === pull.number && g.headSha === pull.headSha) ?? null;

/**
 * The tree a merge group is, as a position: the branch's tip with the PRs of the groups below it stacked on in
 * order (a group built on another group's commit holds that group's PRs). A group built on a commit that is
 * neither (the branch moved since) is that commit, alone.
 */
export function groupPosition(read: MergeQueueRead, group: MergeGroup, tip: string): Position {
  const stack: StackMember[] = [];
  const seen = new Set<string>([group.sha]);
  let parent = group.parent;
  for (;;) {
    if (parent === tip) return { root: tip, stack: stack.reverse() };
    const below = queuedGroups(read).find((g) => g.sha === parent);
    if (!below || seen.has(below.sha)) return { root: group.parent, stack: [] };
    seen.add(below.sha);
    stack.push({ pr: below.pr, head: below.headSha });
    parent = below.parent;
  }
}
