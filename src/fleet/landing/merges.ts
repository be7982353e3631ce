import type { RepoConfig } from '../../config/repo-config.js';
import type { ClaimView, RepoRef } from '../../forge/types.js';
import {
  enqueueRefusedNotice,
  fastForwardRefusedNotice,
  landCommitForgedNotice,
  mergeRefusedNotice,
} from '../notices/messages.js';
import { queuedAt } from '../merge-queue.js';
import { checkLandCommit, landBranch } from './land-commits.js';
import type { Run } from '../../store/fleet/runs.js';
import { baseRefOf, baseTipOf, type RepoFacts } from '../repo-facts.js';
import {
  NOT_FAST_FORWARD,
  normalize,
  ownVerdicts,
  stackWords,
  type Landed,
  type LandingRecord,
  type Position,
} from '../stacks.js';
import { verdictOn } from '../spawn/verdicts.js';
import type { Io } from '../context.js';
import { issueSpan } from '../notices/issue-trace.js';

// LD03, LD05: the merges a pass makes, planned from what it read, then made one at a time, each only while the
// base branch is at exactly the tree its lander judged: through the PR, or (autoland.fast_forward) by moving
// the branch to the very commit the lander judged.

/**
 * LD03, LD05: merge the head the verdict judged, only while `branch` is at the tree it judged it on: `on.root`
 * with `on.stack` merged by yoke just before it, in this order (an empty stack: `branch` still at `on.root`).
 */
export type MergeAction = {
  type: 'merge';
  pr: number;
  sha: string;
  on: Position;
  branch: string;
  /**
   * LD03: with fast-forward landing, the commit the lander judged, to move `branch` to, and the pinned tree it
   * must be: `base` with `heads` merged on in order (null: merge the PR).
   */
  land: LandTarget | null;
  /** LD04: `branch` requires GitHub's merge queue: the PR is added to it, and GitHub merges its group. */
  queue: boolean;
  method: 'merge' | 'squash' | 'rebase';
  run: string;
};

/** LD03: the commit a lander judged, and the pinned tree it was built as. */
export interface LandTarget {
  sha: string;
  base: string;
  heads: readonly string[];
}

/** The land target of a lander's verdict: its commit, and the base and heads it was built from (null: none built). */
function landTargetOf(run: Pick<Run, 'landSha' | 'baseSha' | 'stack' | 'headSha'> | undefined): LandTarget | null {
  if (!run?.landSha || !run.baseSha || !run.headSha) return null;
  return { sha: run.landSha, base: run.baseSha, heads: [...run.stack.map((m) => m.head), run.headSha] };
}

export interface AfterLaunch {
  /** Live subjects once this pass's launches are counted (a lander just launched holds its PR's merge). */
  liveSubjects: ReadonlySet<string>;
  /** Whether the merge this verdict run leads to was already attempted (merged, or refused on this same verdict). */
  attempted(pr: number, sha: string, verdictRun: string): boolean;
}

/** A claim PR yoke merged, at the commit GitHub made of it. */
export interface MergedClaim {
  repo: RepoRef;
  pr: number;
  mergeSha: string;
  config: RepoConfig;
}

/** The port through which the fleet says "merged at sha"; it gets the same forge and store the merge used. */
export type MergeListener = (deps: Io, merged: MergedClaim) => Promise<void>;

/**
 * LD03, LD05: the merges this pass makes, branch by branch: from where the branch is now, each claim PR (oldest
 * first) accepted on exactly the tree the merges before it leave, so a stack accepted whole lands whole, in its
 * order, and nothing lands on a tree no lander accepted.
 */
export function planMerges(
  facts: RepoFacts,
  record: LandingRecord,
  mergeable: readonly ClaimView[],
  after: AfterLaunch,
): MergeAction[] {
  const out: MergeAction[] = [];
  const left = [...mergeable].sort((a, b) => a.pull.number - b.pull.number);
  for (const branch of new Set(left.map((c) => baseRefOf(facts, c.pull)))) {
    const tip = baseTipOf(facts, { baseRef: branch });
    if (!tip) continue;
    if (facts.mergeQueues?.has(branch)) {
      out.push(
        ...planEnqueues(
          facts,
          record,
          left.filter((c) => baseRefOf(facts, c.pull) === branch),
          { branch, tip },
        ),
      );
      continue;
    }
    let on: Position = { root: tip, stack: [] };
    for (;;) {
      const next = left
        .filter((c) => baseRefOf(facts, c.pull) === branch)
        .map((c) => ({ c, v: verdictOn(record, c.pull, on) }))
        .find(({ c, v }) => v?.verdict === 'accept' && !after.attempted(c.pull.number, c.pull.headSha, v.runId));
      if (!next) break;
      left.splice(left.indexOf(next.c), 1);
      out.push({
        type: 'merge',
        pr: next.c.pull.number,
        sha: next.c.pull.headSha,
        on,
        branch,
        method: facts.config.autoland.merge_method,
        run: next.v!.runId,
        queue: false,
        land: facts.config.autoland.fast_forward ? landTargetOf(record.runs.find((r) => r.id === next.v!.runId)) : null,
      });
      on = { root: tip, stack: [...on.stack, { pr: next.c.pull.number, head: next.c.pull.headSha }] };
    }
  }
  return out;
}

/**
 * LD04: on a branch where GitHub's merge queue is required, each claim PR out of the queue whose latest own
 * verdict is an accept on the branch as it is, not queued on that accept before, is added to the queue.
 */
function planEnqueues(
  facts: RepoFacts,
  record: LandingRecord,
  claims: readonly ClaimView[],
  { branch, tip }: { branch: string; tip: string },
): MergeAction[] {
  const read = facts.mergeQueues?.get(branch);
  if (!read) return [];
  const out: MergeAction[] = [];
  for (const c of claims) {
    if (queuedAt(read, c.pull)) continue;
    const own = ownVerdicts(record, c.pull).at(-1);
    if (own?.verdict !== 'accept' || verdictOn(record, c.pull, { root: tip, stack: [] })?.verdict !== 'accept')
      continue;
    const tried = (facts.enqueues ?? []).some(
      (e) => e.prNumber === c.pull.number && e.headSha === c.pull.headSha && e.runId === own.id,
    );
    if (tried) continue;
    out.push({
      type: 'merge',
      pr: c.pull.number,
      sha: c.pull.headSha,
      on: { root: tip, stack: [] },
      branch,
      land: null,
      queue: true,
      method: facts.config.autoland.merge_method,
      run: own.id,
    });
  }
  return out;
}

/** One planned merge, made only while the base branch is at the tree its lander judged (LD03). */
export async function executeMerge(
  deps: Io & { onMerged?: MergeListener },
  facts: RepoFacts,
  a: MergeAction,
  landed: Landed[],
): Promise<void> {
  const { forge, store, log } = deps;
  // LD03: the base is read again at the instant of the merge, and must be the tree the verdict judged:
  // its base, with what of its stack yoke merged just before (LD05). A push, a person's merge or a refused
  // merge below it moved it elsewhere: nothing is merged; the next pass validates it anew.
  const tip = await forge.readBranchTip(facts.repo, a.branch);
  const judged = normalize(a.on, landed);
  if (judged.stack.length || tip !== judged.root) {
    log.info(
      {
        repo: facts.repo.fullName,
        pr: a.pr,
        sha: a.sha,
        judged: a.on.root,
        below: stackWords(a.on.stack),
        now: tip,
      },
      'not merged: its base branch is not at the tree the verdict judged; a lander validates it on the new base',
    );
    return;
  }
  if (a.queue) {
    await enqueue(deps, facts, a);
    return;
  }
  if (facts.mergeQueues?.has(a.branch)) {
    // LD04: never around GitHub's merge queue (a plan never asks; GitHub would refuse too).
    log.warn({ repo: facts.repo.fullName, pr: a.pr }, 'not merged: its base branch requires the merge queue');
    return;
  }
  if (a.land) {
    await fastForward(deps, facts, { ...a, land: a.land }, { tip, landed });
    return;
  }
  const res = await forge.merge(facts.repo, a.pr, a.sha, a.method);
  if (res.ok) {
    const done = {
      repo: facts.repo.fullName,
      prNumber: a.pr,
      headSha: a.sha,
      state: 'merged' as const,
      detail: null,
      at: deps.clock.now(),
      runId: a.run,
      baseSha: tip,
      mergeSha: res.sha,
    };
    await store.merges.record(done);
    landed.push(done);
    log.info({ repo: facts.repo.fullName, pr: a.pr, sha: a.sha }, 'merged accepted claim PR');
    await mergeSpan(deps, facts, { pr: a.pr, sha: a.sha, mergeSha: res.sha });
    await deps.onMerged?.(deps, { repo: facts.repo, pr: a.pr, mergeSha: res.sha, config: facts.config });
  } else {
    await recordRefusal(deps, facts, a, { tip, detail: res.message });
    await forge.createComment(facts.repo, a.pr, mergeRefusedNotice(a.pr, a.sha, res.message));
  }
}

/**
 * LD03: lands a validated commit by moving the base branch to it, as a fast-forward: GitHub refuses the update
 * unless the branch is still where the commit grew from (a compare-and-swap), so no push in between can slip a
 * tree no lander judged onto it. GitHub marks the PR merged once its head is on the branch.
 */
async function fastForward(
  deps: Io & { onMerged?: MergeListener },
  facts: RepoFacts,
  a: MergeAction & { land: LandTarget },
  /** Where the base branch was when the pass read it, and what this pass landed on it so far. */
  { tip, landed }: { tip: string; landed: Landed[] },
): Promise<void> {
  const { forge, store, log } = deps;
  const repo = facts.repo.fullName;
  // LD03: only yoke's pinned tree lands: read back what the lander judged, and refuse a commit that is not the
  // pinned base with the heads merged on in order (a writer's commit slipped into the land branch in the window).
  const forged = await checkLandCommit(forge, facts.repo, a.land.sha, a.land);
  if (forged) {
    // What the lander judged is that commit, not the tree it was told: so recorded, its verdict counts on no tree
    // of the branch, and the next pass validates the PR again on a commit yoke builds anew.
    await store.runs.setJudgedTree(a.run, a.land.sha, []);
    await recordRefusal(deps, facts, a, { tip, detail: forged });
    log.warn(
      { repo, pr: a.pr, sha: a.sha, land: a.land.sha, problem: forged },
      "not landed: the commit the lander judged is not yoke's pinned tree; a lander validates the PR again",
    );
    await forge.createComment(facts.repo, a.pr, landCommitForgedNotice(a.pr, a.land.sha, forged));
    return;
  }
  const res = await forge.moveBranch(facts.repo, a.branch, a.land.sha);
  if (!res.ok && NOT_FAST_FORWARD.test(res.message)) {
    // The branch moved after the read (a push in the window), or the commit grew from another commit of the
    // same tree: nothing lands. Recorded against this verdict, which then counts for nothing: the next pass
    // validates the PR again where the branch is.
    await recordRefusal(deps, facts, a, { tip, detail: res.message });
    log.info(
      { repo, pr: a.pr, sha: a.sha, land: a.land.sha, now: tip },
      'not landed: GitHub would not fast-forward the base branch to the validated commit; a lander validates it again',
    );
    return;
  }
  const done = {
    repo,
    prNumber: a.pr,
    headSha: a.sha,
    state: res.ok ? ('merged' as const) : ('refused' as const),
    detail: res.ok ? null : res.message,
    at: deps.clock.now(),
    runId: a.run,
    baseSha: tip,
    mergeSha: res.ok ? a.land.sha : null,
  };
  await store.merges.record(done);
  if (!res.ok) {
    await forge.createComment(facts.repo, a.pr, fastForwardRefusedNotice(a.pr, a.land.sha, a.branch, res.message));
    return;
  }
  landed.push(done);
  log.info({ repo, pr: a.pr, sha: a.sha, land: a.land.sha }, 'landed accepted claim PR by fast-forward');
  await forge.deleteBranch(facts.repo, landBranch(a.pr)).catch(() => undefined);
  await mergeSpan(deps, facts, { pr: a.pr, sha: a.sha, mergeSha: a.land.sha });
  await deps.onMerged?.(deps, { repo: facts.repo, pr: a.pr, mergeSha: a.land.sha, config: facts.config });
}

/** The merge, in the trace of the issue its claim PR closes. */
const mergeSpan = (io: Io, facts: RepoFacts, m: { pr: number; sha: string; mergeSha: string }) =>
  issueSpan(io, { repo: facts.repo.fullName, issue: facts.claims.get(m.pr)?.issueNumber ?? null }, 'yoke.merge', {
    start: io.clock.now(),
    attributes: { 'yoke.pr': m.pr, 'yoke.head_sha': m.sha, 'yoke.merge_sha': m.mergeSha },
  });

/**
 * LD04: adds an accepted claim PR to the merge queue its branch requires, at the head its lander judged.
 * GitHub's answer is recorded against that accept, which is not queued again; a refusal is said on the PR.
 */
async function enqueue(deps: Io & { onMerged?: MergeListener }, facts: RepoFacts, a: MergeAction): Promise<void> {
  const res = await deps.forge.enqueuePullRequest(facts.repo, a.pr, a.sha);
  await deps.store.enqueues.record({
    repo: facts.repo.fullName,
    prNumber: a.pr,
    headSha: a.sha,
    runId: a.run,
    state: res.ok ? 'queued' : 'refused',
    detail: res.ok ? null : res.message,
    at: deps.clock.now(),
  });
  if (res.ok) {
    deps.log.info({ repo: facts.repo.fullName, pr: a.pr, sha: a.sha }, 'added accepted claim PR to the merge queue');
    return;
  }
  await deps.forge.createComment(facts.repo, a.pr, enqueueRefusedNotice(a.pr, a.branch, res.message));
}

/** GitHub refused this merge on this verdict: recorded, so it is not asked again on the same verdict. */
async function recordRefusal(
  deps: Pick<Io, 'store' | 'clock'>,
  facts: RepoFacts,
  a: MergeAction,
  { tip, detail }: { tip: string; detail: string },
): Promise<void> {
  await deps.store.merges.record({
    repo: facts.repo.fullName,
    prNumber: a.pr,
    headSha: a.sha,
    state: 'refused',
    detail,
    at: deps.clock.now(),
    runId: a.run,
    baseSha: tip,
    mergeSha: null,
  });
}
