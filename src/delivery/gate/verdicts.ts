import { redactSecrets } from '../../kernel/redact.js';
import { z } from 'zod';
import type { QaCase } from '../../config/qa-plan.js';
import { resolvePlanRef } from '../../config/qa-plan.js';
import type { DeploymentRun } from '../../store/deployment-runs.js';
import type { PlanGroup } from '../../store/qa.js';
import { qaCommands } from './commands.js';
import { canWrite } from '../../kernel/permission.js';
import { authorizeMaintainer } from './authority.js';
import { type Actor, type DeliveryContext, type DeliveryRepo, type StageAt } from '../context.js';
import { ok, refuse, type Result } from '../../kernel/result.js';
import { runAtStage } from '../runs/deployment-runs.js';
import { evaluateCases } from './evaluate.js';
import { enterQaStage } from './stage.js';
import { syncTrackingIssue } from '../runs/tracking.js';

// What a QA stage asks to run, and the verdicts recorded against it: an
// item's own plans (its holder runs them) or a driver-owned group.

export const QaTarget = z.union([
  z.object({ item: z.string().min(1).max(30), plan: z.string().min(1).max(200).optional() }).strict(),
  z.object({ plan: z.string().min(1).max(200) }).strict(),
]);
export type QaTarget = z.infer<typeof QaTarget>;

export const VerdictBody = z
  .object({
    item: z.string().min(1).max(30).optional(),
    plan: z.string().min(1).max(200).optional(),
    case: z.string().min(1).max(64),
    result: z.enum(['pass', 'fail', 'error']),
    evidence: z.string().max(32_000).optional(),
    replaces: z.string().min(1).max(64).optional(),
    source: z.enum(['yoke qa case run', 'yoke qa plan run', 'capture']).default('yoke qa case run'),
    /** TR11: only a name the credential may use (an operator's: the run's driver); by default the credential's own. */
    by: z.string().min(1).max(100).optional(),
  })
  .strict()
  .refine((b) => b.item !== undefined || b.plan !== undefined, {
    message: 'name the item (--item) or, for a shared plan, the plan (--plan)',
  });
export type VerdictBody = z.infer<typeof VerdictBody>;

export const WaiveBody = z
  .object({
    item: z.string().min(1).max(30).optional(),
    plan: z.string().min(1).max(200),
    case: z.string().min(1).max(64),
    reason: z.string().min(1).max(2000),
  })
  .strict();
export type WaiveBody = z.infer<typeof WaiveBody>;

export interface WorkPlan {
  planId: string;
  groupId: string | null;
  cases: (QaCase & { passed: boolean })[];
}

export interface QaWork {
  run: string;
  repo: string;
  stage: string;
  commit: string;
  subject: string;
  plans: WorkPlan[];
}

type Scope =
  | { kind: 'item'; issueNumber: number; item: string; plans: { planId: string; cases: QaCase[] }[] }
  | { kind: 'group'; group: PlanGroup };

/** The current QA stage of an active run, entered (frozen) if it was not yet, and the scope a target names there. */
async function scopeAt(
  ctx: DeliveryContext,
  runId: string,
  stage: string,
  target: QaTarget,
): Promise<Result<{ run: DeploymentRun; dr: DeliveryRepo; scope: Scope }>> {
  const got = await runAtStage(ctx, runId, stage, 'qa');
  if (!got.ok) return got;
  const { run, dr } = got.value;
  await enterQaStage({ ctx, dr, run, stage });
  const scope = await resolveScope({ ctx, dr, run, stage }, target);
  return scope.ok ? ok({ run, dr, scope: scope.value }) : scope;
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

async function scopeVerdicts(ctx: DeliveryContext, run: DeploymentRun, stage: string, scope: Scope, planId: string) {
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
async function runHolds(
  ctx: DeliveryContext,
  actor: Actor,
  run: DeploymentRun,
  stage: string,
  s: Scope,
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

/** The cases a target runs, each with whether it already has a current pass. */
export async function qaWork(
  ctx: DeliveryContext,
  actor: Actor,
  runId: string,
  stage: string,
  target: QaTarget,
): Promise<Result<QaWork>> {
  const got = await scopeAt(ctx, runId, stage, target);
  if (!got.ok) return got;
  const { run, scope: s } = got.value;
  const holds = await runHolds(ctx, actor, run, stage, s);
  if (!holds.ok) return holds;
  const raw =
    s.kind === 'group'
      ? [{ planId: s.group.planId, groupId: s.group.id, cases: s.group.cases }]
      : s.plans.map((p) => ({ ...p, groupId: null }));
  const verdictsOf = await Promise.all(raw.map((p) => scopeVerdicts(ctx, run, stage, s, p.planId)));
  const plans = raw.map((p, i) => {
    const states = new Map(evaluateCases(p.cases, verdictsOf[i]!).map((c) => [c.caseId, c.passed]));
    return {
      planId: p.planId,
      groupId: p.groupId,
      cases: p.cases.filter((c) => states.has(c.id)).map((c) => ({ ...c, passed: states.get(c.id)! })),
    };
  });
  return ok({
    run: run.id,
    repo: run.repo,
    stage,
    commit: s.kind === 'group' ? s.group.targetCommit : run.commit,
    subject: s.kind === 'group' ? s.group.id : s.item,
    plans,
  });
}

export interface RecordedVerdict {
  id: number;
  subject: string;
  plan: string;
  case: string;
  result: string;
}

/** Records one case's verdict (QA03, QA06); evidence where the case requires it. */
export async function recordQaVerdict(
  ctx: DeliveryContext,
  actor: Actor,
  runId: string,
  stage: string,
  body: VerdictBody,
): Promise<Result<RecordedVerdict>> {
  const { by: named, ...v } = body;
  return record(
    ctx,
    actor,
    runId,
    stage,
    body.item !== undefined ? { item: body.item, ...(body.plan ? { plan: body.plan } : {}) } : { plan: body.plan! },
    { ...v, named },
  );
}

/** QA13: a maintainer discharges a case with a reason. */
export async function waiveQaCase(
  ctx: DeliveryContext,
  actor: Actor,
  runId: string,
  stage: string,
  body: WaiveBody,
): Promise<Result<RecordedVerdict>> {
  const target: QaTarget = body.item !== undefined ? { item: body.item, plan: body.plan } : { plan: body.plan };
  return record(ctx, actor, runId, stage, target, {
    case: body.case,
    result: 'waived',
    evidence: body.reason,
    source: 'waiver',
  });
}

/**
 * TR11: the name a verdict is recorded under comes from its credential. An
 * operator records as `operator`, or as the run's driver when it names it;
 * a person as their login; a run as `run:<id>`. Naming anyone else is refused.
 */
function recorderOf(actor: Actor, run: DeploymentRun, named: string | undefined): Result<string> {
  const own = actor.role === 'operator' ? 'operator' : actor.role === 'person' ? actor.login : `run:${actor.runId}`;
  if (named === undefined || named.toLowerCase() === own.toLowerCase()) return ok(own);
  if (actor.role === 'operator' && run.driverId !== null && named === run.driverId) return ok(named);
  return refuse('identity_not_yours', {
    named,
    allowed: actor.role === 'operator' && run.driverId ? `operator, or as the run's driver ${run.driverId}` : own,
  });
}

async function record(
  ctx: DeliveryContext,
  actor: Actor,
  runId: string,
  stage: string,
  target: QaTarget,
  v: {
    case: string;
    result: 'pass' | 'fail' | 'error' | 'waived';
    evidence?: string | undefined;
    replaces?: string | undefined;
    source: string;
    named?: string | undefined;
  },
): Promise<Result<RecordedVerdict>> {
  const got = await scopeAt(ctx, runId, stage, target);
  if (!got.ok) return got;
  const { run, dr, scope: s } = got.value;
  let by: string;
  if (v.result === 'waived') {
    const who = await authorizeMaintainer(
      ctx,
      dr,
      actor,
      `Waiving case ${v.case}`,
      `/yoke qa waive ${v.case}${target.plan ? ` --plan ${target.plan}` : ''} --reason "why"`,
    );
    if (!who.ok) return who;
    by = who.value;
  } else {
    const who = recorderOf(actor, run, v.named);
    if (!who.ok) return who;
    by = who.value;
  }
  const holds = await runHolds(ctx, actor, run, stage, s);
  if (!holds.ok) return holds;
  const plans = s.kind === 'group' ? [{ planId: s.group.planId, cases: s.group.cases }] : s.plans;
  const holding = plans.filter((p) => p.cases.some((c) => c.id === v.case));
  if (holding.length !== 1) {
    if (holding.length > 1)
      return refuse('qa_plan_ambiguous', { ref: `case ${v.case}`, ids: holding.map((p) => p.planId) });
    return refuse('qa_case_unknown', {
      plan: plans.map((p) => p.planId).join(', ') || '(no own plan)',
      case: v.case,
      cases: plans.flatMap((p) => p.cases.map((c) => c.id)),
    });
  }
  const plan = holding[0]!;
  const theCase = plan.cases.find((c) => c.id === v.case)!;
  const cmd = qaCommands(run.repo, run.id, stage);
  if (v.replaces !== undefined && (v.replaces === v.case || !plan.cases.some((c) => c.id === v.replaces))) {
    return refuse('qa_case_unknown', {
      plan: plan.planId,
      case: v.replaces,
      cases: plan.cases.map((c) => c.id).filter((c) => c !== v.case),
    });
  }
  // TR10: a replacement the pinned plan does not declare is a waiver anyone could write; a maintainer's waiver is the way.
  if (v.replaces !== undefined && theCase.replaces !== v.replaces) {
    return refuse('qa_replacement_undeclared', {
      plan: plan.planId,
      case: v.case,
      replaces: v.replaces,
      waive: cmd.waive(plan.planId, v.replaces),
    });
  }
  // TR11: a manual case's verdict is a person's approval: a writer's own token, never an operator's or a run's.
  if (theCase.manual && v.result !== 'waived') {
    if (actor.role !== 'person')
      return refuse('person_token_required', {
        action: `Recording manual case ${v.case}`,
        repo: dr.repo.fullName,
        comment: null,
      });
    const permission = await ctx.forge.getPermission(dr.repo, actor.login);
    if (!canWrite(permission))
      return refuse('qa_approval_forbidden', { repo: dr.repo.fullName, login: actor.login, permission, case: v.case });
  }
  if (v.result === 'pass' && theCase.evidence === 'required' && !v.evidence?.trim()) {
    const again = s.kind === 'group' ? cmd.groupManualCase(plan.planId, v.case) : cmd.itemManualCase(s.item, v.case);
    return refuse('qa_evidence_required', { case: v.case, command: again });
  }
  const id = await ctx.store.qa.recordVerdict({
    runId: run.id,
    stage,
    issueNumber: s.kind === 'item' ? s.issueNumber : null,
    groupId: s.kind === 'group' ? s.group.id : null,
    planId: plan.planId,
    caseId: v.case,
    commit: s.kind === 'group' ? s.group.targetCommit : run.commit,
    result: v.result,
    // Evidence is kept and shown (reports, notices): no secret shape a case printed survives.
    evidence: v.evidence?.trim() ? redactSecrets(v.evidence) : null,
    source: v.source,
    replaces: v.replaces ?? null,
    recordedBy: by,
    recordedAt: ctx.clock.now(),
  });
  // A command that addresses a notice answers it: a verdict or waiver recorded by its recipient.
  const subject = s.kind === 'group' ? s.group.id : s.item;
  for (const n of (await ctx.store.notices.forRun(run.id)).filter(
    (x) => x.stage === stage && x.subject === subject && x.recipient === by && ['posted', 'edited'].includes(x.state),
  )) {
    await ctx.store.notices.update(n.id, {
      state: 'answered',
      detail: `${by} recorded ${v.case}`,
      at: ctx.clock.now(),
    });
  }
  await syncTrackingIssue(ctx, dr, run.id);
  return ok({
    id,
    subject: s.kind === 'group' ? s.group.id : s.item,
    plan: plan.planId,
    case: v.case,
    result: v.result,
  });
}
