import { git, revParse } from '../git.js';
import { meetsRequiredCheck, type ForgeRepo, type Issue, type QueueEntry } from './records.js';

// GitHub's merge queue, as the embedded forge keeps it for a branch a ruleset requires it on (LD04). A PR is
// added at its head (GraphQL enqueuePullRequest) once the branch's required checks pass on that head. For each
// entry GitHub builds a merge group: a commit merging the PR's head onto the branch's tip or onto the group of
// the PR ahead of it, on the branch `gh-readonly-queue/<branch>/pr-<n>-<head>`, and announces it
// (`merge_group` checks_requested). The bottom group whose required checks all passed on its commit lands: the
// branch moves to it, and its PR is merged there. A group whose required check failed is destroyed and its PR
// dropped from the queue; the groups above it are built again. So does a PR whose head moved, or whose head
// no longer merges.

export interface QueueHost {
  /** A merge group built or destroyed: GitHub sends `merge_group`. */
  announce: (
    r: ForgeRepo,
    action: 'checks_requested' | 'destroyed',
    group: { branch: string; headSha: string; headRef: string; baseSha: string; reason?: string },
  ) => void;
  /** Whether the queue waits before building groups (a test holds it until the PRs it wants are queued). */
  hold: (r: ForgeRepo, branch: string, queued: readonly number[]) => boolean;
  /** The branch moved to a group's commit: the push event, and GitHub marks merged the PRs it holds. */
  landed: (r: ForgeRepo, branch: string, before: string, after: string) => void;
}

export const groupRef = (branch: string, e: Pick<QueueEntry, 'pr' | 'head'>): string =>
  `refs/heads/gh-readonly-queue/${branch}/pr-${e.pr}-${e.head}`;

const pullOf = (r: ForgeRepo, n: number): Issue | undefined => {
  const i = r.issues.get(n);
  return i?.pull ? i : undefined;
};

/** The outcome of the branch's required checks on a commit: all passed, one failed, or still pending. */
function checksOn(r: ForgeRepo, branch: string, sha: string): 'passed' | 'failed' | 'pending' {
  let pending = false;
  for (const need of r.requiredChecks.get(branch) ?? []) {
    const run = r.checkRuns.filter((c) => c.headSha === sha && meetsRequiredCheck(c, need)).at(-1);
    if (!run || run.status !== 'completed') pending = true;
    else if (run.conclusion !== 'success' && run.conclusion !== 'neutral' && run.conclusion !== 'skipped')
      return 'failed';
  }
  return pending ? 'pending' : 'passed';
}

export class MergeQueues {
  constructor(private readonly host: QueueHost) {}

  entries(r: ForgeRepo, branch: string): QueueEntry[] {
    let q = r.queues.get(branch);
    if (!q) r.queues.set(branch, (q = []));
    return q;
  }

  /** GitHub's refusal to queue this PR at this head, or null once it is queued. */
  enqueue(r: ForgeRepo, n: number, expectedHead: string): string | null {
    const i = pullOf(r, n);
    if (!i || i.state !== 'open') return 'Pull request is not open';
    const branch = i.pull!.baseRef;
    if (!r.mergeQueue.has(branch)) return 'Pull request base branch does not have a merge queue';
    if (i.pull!.headSha !== expectedHead) return 'Head sha did not match expected head oid';
    const q = this.entries(r, branch);
    if (q.some((e) => e.pr === n)) return 'Pull request is already in the merge queue';
    if (checksOn(r, branch, i.pull!.headSha) !== 'passed')
      return `Required status checks have not passed on ${i.pull!.headSha.slice(0, 7)}`;
    q.push({ pr: n, head: i.pull!.headSha, group: null, parent: null });
    this.settle(r, branch);
    return null;
  }

  /** Brings a branch's queue up to date: drops what cannot stay, lands what passed, builds what is missing. */
  settle(r: ForgeRepo, branch: string): void {
    const q = this.entries(r, branch);
    for (let changed = true; changed;) {
      changed = false;
      // A PR closed, or whose head moved since it was queued, leaves the queue.
      for (const e of [...q]) {
        const i = pullOf(r, e.pr);
        if (!i || i.state !== 'open' || i.pull!.headSha !== e.head) {
          this.drop(r, branch, e, 'dequeued');
          changed = true;
        }
      }
      const failed = q.find((e) => e.group && checksOn(r, branch, e.group) === 'failed');
      if (failed) {
        this.drop(r, branch, failed, 'dequeued');
        changed = true;
        continue;
      }
      const tip = revParse(r.gitDir, `refs/heads/${branch}`)!;
      const bottom = q[0];
      if (bottom?.group && bottom.parent === tip && checksOn(r, branch, bottom.group) === 'passed') {
        git(r.gitDir, ['update-ref', `refs/heads/${branch}`, bottom.group, tip]);
        git(r.gitDir, ['update-ref', '-d', groupRef(branch, bottom)]);
        q.shift();
        this.host.landed(r, branch, tip, bottom.group);
        this.host.announce(r, 'destroyed', {
          branch,
          headSha: bottom.group,
          headRef: groupRef(branch, bottom),
          baseSha: tip,
          reason: 'merged',
        });
        changed = true;
        continue;
      }
      if (
        this.host.hold(
          r,
          branch,
          q.map((e) => e.pr),
        )
      )
        return;
      changed = this.build(r, branch, tip) || changed;
    }
  }

  /** Builds each entry's group on the one below it (the bottom on the tip); true when one was built or dropped. */
  private build(r: ForgeRepo, branch: string, tip: string): boolean {
    const q = this.entries(r, branch);
    let parent = tip;
    for (const e of q) {
      if (e.group && e.parent === parent) {
        parent = e.group;
        continue;
      }
      if (e.group) this.destroy(r, branch, e, 'invalidated');
      let tree: string;
      try {
        tree = git(r.gitDir, ['merge-tree', '--write-tree', parent, e.head]).split('\n')[0]!;
      } catch {
        this.drop(r, branch, e, 'dequeued');
        return true;
      }
      const i = pullOf(r, e.pr)!;
      const message = `Merge pull request #${e.pr} from ${i.pull!.headRef}\n\n${i.title}`;
      const sha = git(r.gitDir, ['commit-tree', tree, '-p', parent, '-p', e.head, '-m', message]);
      git(r.gitDir, ['update-ref', groupRef(branch, e), sha]);
      Object.assign(e, { group: sha, parent });
      this.host.announce(r, 'checks_requested', {
        branch,
        headSha: sha,
        headRef: groupRef(branch, e),
        baseSha: parent,
      });
      parent = sha;
    }
    return false;
  }

  private destroy(r: ForgeRepo, branch: string, e: QueueEntry, reason: string): void {
    if (!e.group) return;
    const ref = groupRef(branch, e);
    if (revParse(r.gitDir, ref)) git(r.gitDir, ['update-ref', '-d', ref]);
    this.host.announce(r, 'destroyed', { branch, headSha: e.group, headRef: ref, baseSha: e.parent!, reason });
    Object.assign(e, { group: null, parent: null });
  }

  private drop(r: ForgeRepo, branch: string, e: QueueEntry, reason: string): void {
    const q = this.entries(r, branch);
    this.destroy(r, branch, e, reason);
    q.splice(q.indexOf(e), 1);
  }
}
