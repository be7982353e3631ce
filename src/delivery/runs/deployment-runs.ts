import { randomBytes } from 'node:crypto';
import type { Stage } from '../../config/delivery.js';
import type { RepoName } from '../../forge/types.js';
import type { DeploymentRun } from '../../store/delivery/deployment-runs.js';
import { authorizeMaintainer } from '../gate/authority.js';
import { deliveryRepo, type Actor, type DeliveryContext, type DeliveryRepo } from '../context.js';
import { ok, refuse, type Result } from '../../kernel/result.js';
import { reconcileOwed } from './owed.js';
import { enterQaStage } from '../gate/stage.js';
import { syncTrackingIssue } from './tracking.js';
import { viewDeploymentRun, type DeploymentView } from './view.js';

// Creating a deployment run, taking over a failed one, and removing a member.

export interface CreateRequest {
  repo: RepoName;
  commit?: string;
  items?: string[];
  supersedes?: string;
  creator?: string | null;
}

const newDeploymentRunId = () => `dr-${randomBytes(5).toString('hex')}`;

/** The run, its delivery repository, and whether it may still move; or the refusal that says why not. */
export async function activeRun(
  ctx: DeliveryContext,
  id: string,
): Promise<Result<{ run: DeploymentRun; dr: DeliveryRepo }>> {
  const run = await ctx.store.deploymentRuns.get(id);
  if (!run) return refuse('deployment_run_unknown', { run: id });
  if (run.status !== 'active') return refuse('deployment_run_not_active', { run: id, status: run.status });
  const dr = await deliveryRepo(ctx, run.repo);
  if (!dr.ok) return dr;
  return ok({ run, dr: dr.value });
}

/**
 * The active run and the stage it is at, when that is the stage named (and of
 * the kind wanted); else the refusal naming the stages, or where the run is.
 */
export async function runAtStage<K extends Stage['kind'] = Stage['kind']>(
  ctx: DeliveryContext,
  id: string,
  stage: string,
  kind: K | null,
): Promise<Result<{ run: DeploymentRun; dr: DeliveryRepo; stage: Extract<Stage, { kind: K }> }>> {
  const got = await activeRun(ctx, id);
  if (!got.ok) return got;
  const { run, dr } = got.value;
  const stages = run.settings.stages;
  const index = stages.findIndex((s) => s.name === stage);
  if (index < 0) return refuse('deployment_stage_unknown', { run: run.id, stage, stages: stages.map((s) => s.name) });
  const current = stages[run.currentStage]!;
  if (index !== run.currentStage || !ofKind(current, kind))
    return refuse('deployment_stage_not_current', { run: run.id, stage, current: current.name, kind: current.kind });
  return ok({ run, dr, stage: current });
}

/** Whether a stage is of the kind asked for (null: any kind). */
const ofKind = <K extends Stage['kind']>(s: Stage, kind: K | null): s is Extract<Stage, { kind: K }> =>
  kind === null || s.kind === kind;

export async function createDeploymentRun(ctx: DeliveryContext, req: CreateRequest): Promise<Result<DeploymentView>> {
  // DX12: one start per project at a time; another meanwhile is told deployment_start_lock_busy.
  const lock = `start:${req.repo}`;
  const me = `start-${randomBytes(4).toString('hex')}`;
  const held = await ctx.store.workLocks.take(lock, me, ctx.clock.now(), START_STALE_MS);
  if (held) return refuse('deployment_start_lock_busy', { repo: req.repo, holder: held.holder });
  try {
    return await startDeploymentRun(ctx, req);
  } finally {
    await ctx.store.workLocks.release(lock, me);
  }
}

/**
 * TR29: whether a commit is on the default branch, or on a release branch the
 * opt-in file names that GitHub protects; else which branch holds it unprotected, or none.
 */
async function trustedBranchOf(
  ctx: DeliveryContext,
  dr: DeliveryRepo,
  commit: string,
): Promise<{ trusted: true } | { trusted: false; unprotected: string | null }> {
  let unprotected: string | null = null;
  for (const branch of ['HEAD', ...(dr.settings.release_branches ?? [])]) {
    const head = await ctx.forge.resolveCommit(dr.repo, branch);
    if (!head || !(head === commit || (await ctx.forge.isAncestor(dr.repo, commit, head)) === true)) continue;
    if (branch === 'HEAD' || (await ctx.forge.isBranchProtected(dr.repo, branch)) === true) return { trusted: true };
    unprotected ??= branch;
  }
  return { trusted: false, unprotected };
}

/** A start older than this was left by a crash. */
const START_STALE_MS = 5 * 60_000;

async function startDeploymentRun(ctx: DeliveryContext, req: CreateRequest): Promise<Result<DeploymentView>> {
  const { store, forge, clock } = ctx;
  const got = await deliveryRepo(ctx, req.repo);
  if (!got.ok) return got;
  const dr = got.value;
  const commit = await forge.resolveCommit(dr.repo, req.commit ?? 'HEAD');
  if (!commit) return refuse('deployment_commit_unknown', { repo: req.repo, commit: req.commit ?? 'HEAD' });
  // TR29: the QA gate is defined by the default branch (or a release branch the opt-in file names), never by the commit under test.
  const branch = await trustedBranchOf(ctx, dr, commit);
  if (!branch.trusted && branch.unprotected)
    return refuse('deployment_branch_unprotected', {
      repo: req.repo,
      commit: commit.slice(0, 12),
      branch: branch.unprotected,
    });
  if (!branch.trusted) {
    return refuse('deployment_commit_off_branch', {
      repo: req.repo,
      commit: commit.slice(0, 12),
      branches: ['default branch', ...(dr.settings.release_branches ?? [])].join(' or '),
    });
  }

  let old: DeploymentRun | undefined;
  if (req.supersedes) {
    old = await store.deploymentRuns.get(req.supersedes);
    if (!old || old.repo !== req.repo)
      return refuse('deployment_supersedes_refused', {
        run: req.supersedes,
        detail: `it is not a deployment run of ${req.repo}`,
      });
    if (old.status !== 'active' && old.status !== 'failed')
      return refuse('deployment_supersedes_refused', { run: old.id, detail: `it is ${old.status}` });
    if (old.commit === commit || !(await forge.isAncestor(dr.repo, old.commit, commit))) {
      return refuse('deployment_supersedes_refused', {
        run: old.id,
        detail: `${commit.slice(0, 12)} is not later than its pinned commit ${old.commit.slice(0, 12)}`,
      });
    }
  }
  const active = await store.deploymentRuns.activeFor(req.repo);
  if (active && active.id !== old?.id) return refuse('deployment_run_active', { repo: req.repo, run: active.id });

  await reconcileOwed({ store, forge, clock, log: ctx.log }, dr.repo, dr.settings.owed_label);
  const owed = await store.deliveryItems.listOwed(req.repo);
  const eligible: { issueNumber: number; prNumber: number }[] = [];
  const why = new Map<number, string>();
  for (const item of owed) {
    if (await forge.isAncestor(dr.repo, item.mergeSha, commit))
      eligible.push({ issueNumber: item.issueNumber, prNumber: item.prNumber });
    else why.set(item.issueNumber, `its claim PR #${item.prNumber} merged after ${commit.slice(0, 12)}`);
  }
  let members = eligible;
  if (req.items?.length) {
    members = [];
    for (const ref of req.items) {
      const n = dr.parseItem(ref);
      if (n === null) return refuse('item_ref_invalid', { ref, example: dr.item(12) });
      const found = eligible.find((e) => e.issueNumber === n);
      if (!found) {
        const delivered = (await store.deliveryItems.get(req.repo, n))?.state === 'delivered';
        return refuse('deployment_item_refused', {
          repo: req.repo,
          item: dr.item(n),
          detail:
            why.get(n) ??
            (delivered ? 'it is already delivered' : 'no merged claim PR of it is known, so its delivery is not owed'),
        });
      }
      if (!members.includes(found)) members.push(found);
    }
  }
  if (members.length === 0) return refuse('deployment_no_members', { repo: req.repo, commit: commit.slice(0, 12) });

  const id = newDeploymentRunId();
  const now = clock.now();
  const created = await store.write(async (t) => {
    const current = await t.deploymentRuns.activeFor(req.repo);
    if (current && current.id !== old?.id) return refuse('deployment_run_active', { repo: req.repo, run: current.id });
    if (old) {
      await t.deploymentRuns.setStatus(old.id, 'superseded', now);
      await t.qa.closeOpenGroupsOf(old.id, 'superseded', now);
    }
    await t.deploymentRuns.create({
      id,
      repo: req.repo,
      commit,
      settings: dr.settings,
      creator: req.creator ?? null,
      supersedes: old?.id ?? null,
      members,
      at: now,
    });
    return ok(id);
  });
  if (!created.ok) return created;
  const run = (await store.deploymentRuns.get(id))!;
  const first = run.settings.stages[0]!;
  if (first.kind === 'qa') await enterQaStage({ ctx, dr, run, stage: first.name });
  await syncTrackingIssue(ctx, dr, id);
  if (old) await syncTrackingIssue(ctx, dr, old.id);
  return ok(await viewDeploymentRun(ctx, dr, (await store.deploymentRuns.get(id))!));
}

/** QA13: removes an item from the run; its delivery stays owed, and it leaves the groups it was waiting on. */
export async function removeMember(
  ctx: DeliveryContext,
  actor: Actor,
  runId: string,
  { item: ref, reason }: { item: string; reason: string },
): Promise<Result<DeploymentView>> {
  const got = await activeRun(ctx, runId);
  if (!got.ok) return got;
  const { run, dr } = got.value;
  // TR11: removing a member is a maintainer's decision, recorded under their own login.
  const who = await authorizeMaintainer(ctx, dr, actor, { action: `Removing ${ref} from run ${run.id}` });
  if (!who.ok) return who;
  const by = who.value;
  const n = dr.parseItem(ref);
  const members = (await ctx.store.deploymentRuns.members(run.id)).filter((m) => m.removedAt === null);
  if (n === null || !members.some((m) => m.issueNumber === n))
    return refuse('deployment_item_unknown', {
      run: run.id,
      item: ref,
      members: members.map((m) => dr.item(m.issueNumber)),
    });
  await ctx.store.write(async (t) => {
    await t.deploymentRuns.removeMember(run.id, n, by, reason, ctx.clock.now());
    for (const g of (await t.qa.groups([run.id])).filter((x) => x.state === 'open' && x.coveredItemIds.includes(n))) {
      await t.qa.setCovered(
        g.id,
        g.coveredItemIds.filter((i) => i !== n),
      );
    }
  });
  await syncTrackingIssue(ctx, dr, run.id);
  return ok(await viewDeploymentRun(ctx, dr, (await ctx.store.deploymentRuns.get(run.id))!));
}

export async function getDeploymentRun(ctx: DeliveryContext, id: string): Promise<Result<DeploymentView>> {
  const run = await ctx.store.deploymentRuns.get(id);
  if (!run) return refuse('deployment_run_unknown', { run: id });
  const dr = await deliveryRepo(ctx, run.repo);
  if (!dr.ok) return dr;
  return ok(await viewDeploymentRun(ctx, dr.value, run));
}

/** Active runs that have this item (PREFIX-N) as a live member. */
export async function findRunsOfItem(ctx: DeliveryContext, ref: string): Promise<string[]> {
  const out: string[] = [];
  for (const run of (await ctx.store.deploymentRuns.list()).filter((r) => r.status === 'active')) {
    const dr = await deliveryRepo(ctx, run.repo);
    if (!dr.ok) continue;
    const n = dr.value.parseItem(ref);
    if (
      n !== null &&
      (await ctx.store.deploymentRuns.members(run.id)).some((m) => m.issueNumber === n && m.removedAt === null)
    )
      out.push(run.id);
  }
  return out;
}
