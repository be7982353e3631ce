import { z } from 'zod';
import type { QaCase } from '../../config/qa-plan.js';
import { resolvePlanRef } from '../../config/qa-plan.js';
import type { DeploymentRun } from '../../store/delivery/deployment-runs.js';
import type { PlanGroup } from '../../store/delivery/qa.js';
import type { Actor, DeliveryContext, DeliveryRepo, StageAt, StageRef } from '../context.js';
import { ok, refuse, type Result } from '../../kernel/result.js';
import { runAtStage } from '../runs/deployment-runs.js';
import { enterQaStage } from './stage.js';

// Where a QA request lands: the stage of an active run (entered, so frozen, if
// it was not yet), and the scope its target names there: an item's own plans
// (its holder runs them) or the open group of a shared plan.

export const QaTarget = z.union([
  z.object({ item: z.string().min(1).max(30), plan: z.string().min(1).max(200).optional() }).strict(),
  z.object({ plan: z.string().min(1).max(200) }).strict(),
]);
export type QaTarget = z.infer<typeof QaTarget>;

export type Scope =
  | { kind: 'item'; issueNumber: number; item: string; plans: { planId: string; cases: QaCase[] }[] }
  | { kind: 'group'; group: PlanGroup };

/** A QA request's place: the run, its repository, the stage and the scope its target names there. */
export interface Scoped {
  run: DeploymentRun;
  dr: DeliveryRepo;
  stage: string;
  scope: Scope;
}

/** The current QA stage of an active run, entered (frozen) if it was not yet, and the scope a target names there. */
export async function scopeAt(ctx: DeliveryContext, at: StageRef, target: QaTarget): Promise<Result<Scoped>> {
  const { stage } = at;
  const got = await runAtStage(ctx, at.runId, stage, 'qa');
  if (!got.ok) return got;
  const { run, dr } = got.value;
  await enterQaStage({ ctx, dr, run, stage });
  const scope = await resolveScope({ ctx, dr, run, stage }, target);
  return scope.ok ? ok({ run, dr, stage, scope: scope.value }) : scope;
}

/** QA17–QA19: the scope a target names: an item's own plans, or the open group of a shared plan. */
async function resolveScope(at: StageAt, target: QaTarget): Promise<Result<Scope>> {
  const { ctx, dr, run, stage } = at;
  const { store } = ctx;
  if ('item' in target) {
    const n = dr.parseItem(target.item);
    const frozen = await store.qa.memberStages(run.id, stage);
    const live = (await store.deploymentRuns.members(run.id)).filter((m) => m.removedAt === null);
    if (n === null || !live.some((m) => m.issueNumber === n) || !frozen.some((f) => f.issueNumber === n)) {
      return refuse('deployment_item_unknown', {
        run: run.id,
        item: target.item,
        members: live.map((m) => dr.item(m.issueNumber)),
      });
    }
    const item = dr.item(n);
    const mine = (await store.qa.memberPlans(run.id, stage)).filter((p) => p.issueNumber === n);
    const snapshots = new Map((await store.qa.snapshots(run.id)).map((s) => [s.planId, s]));
    let chosen = mine;
    if (target.plan) {
      const groups = await store.qa.groups([run.id]);
      const names = mine.map((p) => ({
        id: p.planId,
        name: snapshots.get(p.planId)?.name ?? groups.find((g) => g.id === p.groupId)?.planName ?? p.planId,
      }));
      const r = resolvePlanRef(target.plan, names);
      if (!r.ok)
        return r.reason === 'ambiguous'
          ? refuse('qa_plan_ambiguous', { ref: target.plan, ids: r.ids })
          : refuse('qa_plan_unknown', { ref: target.plan, known: r.known, where: `${item}'s plans at ${stage}` });
      chosen = mine.filter((p) => p.planId === r.id);
      if (chosen[0]!.owner === 'group')
        return refuse('qa_plan_not_member_owned', { run: run.id, stage, item, plan: r.id });
    }
    const plans = chosen
      .filter((p) => p.owner === 'member')
      .map((p) => ({ planId: p.planId, cases: snapshots.get(p.planId)?.cases ?? [] }));
    return ok({ kind: 'item', issueNumber: n, item, plans });
  }
  const groups = (await store.qa.groups([run.id])).filter((g) => g.stage === stage);
  const plans = [...new Map(groups.map((g) => [g.planId, { id: g.planId, name: g.planName }])).values()];
  const r = resolvePlanRef(target.plan, plans);
  if (!r.ok) {
    return r.reason === 'ambiguous'
      ? refuse('qa_plan_ambiguous', { ref: target.plan, ids: r.ids })
      : refuse('qa_plan_unknown', {
          ref: target.plan,
          known: r.known,
          where: `the shared and run-level plans of run ${run.id} at ${stage}`,
        });
  }
  const open = groups.find((g) => g.planId === r.id && g.state === 'open');
  if (!open)
    return refuse('plan_group_not_open', {
      run: run.id,
      stage,
      plan: r.id,
      closed: groups.filter((g) => g.planId === r.id).map((g) => `${g.id} (${g.outcome ?? 'closed'})`),
    });
  return ok({ kind: 'group', group: open });
}

/** The verdicts recorded for one plan in a scope, at the commit the scope is judged on. */
export async function scopeVerdicts(ctx: DeliveryContext, { run, stage, scope }: Scoped, planId: string) {
  return (await ctx.store.qa.verdicts([run.id])).filter(
    (v) =>
      v.stage === stage &&
      v.planId === planId &&
      (scope.kind === 'group'
        ? v.groupId === scope.group.id && v.commit === scope.group.targetCommit
        : v.issueNumber === scope.issueNumber && v.groupId === null && v.commit === run.commit),
  );
}

/** TR11: a run's credential reaches only the item it holds at this stage. */
export async function runHolds(
  ctx: DeliveryContext,
  actor: Actor,
  { run, stage, scope: s }: Scoped,
): Promise<Result<true>> {
  if (actor.role !== 'run') return ok(true);
  const holder =
    s.kind === 'item'
      ? ((await ctx.store.qa.memberStages(run.id, stage)).find((f) => f.issueNumber === s.issueNumber)?.holder ?? null)
      : null;
  if (holder === `run:${actor.runId}`) return ok(true);
  return refuse('run_not_holder', {
    run: actor.runId,
    item: s.kind === 'item' ? s.item : s.group.id,
    holder: holder ?? (s.kind === 'group' ? "the run's driver" : 'nobody'),
  });
}
