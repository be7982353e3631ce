import { redactSecrets } from '../../kernel/redact.js';
import { z } from 'zod';
import type { QaCase } from '../../config/qa-plan.js';
import type { DeploymentRun } from '../../store/delivery/deployment-runs.js';
import { qaCommands } from './commands.js';
import { canWrite } from '../../kernel/permission.js';
import { authorizeMaintainer } from './authority.js';
import type { Actor, DeliveryContext, StageRef } from '../context.js';
import { runHolds, scopeAt, scopeVerdicts, type QaTarget, type Scoped } from './scope.js';

export { QaTarget } from './scope.js';
import { ok, refuse, type Result } from '../../kernel/result.js';
import { evaluateCases } from './evaluate.js';
import { syncTrackingIssue } from '../runs/tracking.js';

// What a QA stage asks to run, and the verdicts recorded against it (where a
// request lands, the scope: scope.ts).

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

/** The cases a target runs, each with whether it already has a current pass. */
export async function qaWork(
  ctx: DeliveryContext,
  actor: Actor,
  at: StageRef,
  target: QaTarget,
): Promise<Result<QaWork>> {
  const got = await scopeAt(ctx, at, target);
  if (!got.ok) return got;
  const scoped = got.value;
  const { run, stage, scope: s } = scoped;
  const holds = await runHolds(ctx, actor, scoped);
  if (!holds.ok) return holds;
  const raw =
    s.kind === 'group'
      ? [{ planId: s.group.planId, groupId: s.group.id, cases: s.group.cases }]
      : s.plans.map((p) => ({ ...p, groupId: null }));
  const verdictsOf = await Promise.all(raw.map((p) => scopeVerdicts(ctx, scoped, p.planId)));
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

/** One case's verdict as it is asked to be recorded: its target, what it says, and who it names. */
interface VerdictAsked {
  target: QaTarget;
  case: string;
  result: 'pass' | 'fail' | 'error' | 'waived';
  evidence?: string | undefined;
  replaces?: string | undefined;
  source: string;
  named?: string | undefined;
}

/** Records one case's verdict (QA03, QA06); evidence where the case requires it. */
export async function recordQaVerdict(
  ctx: DeliveryContext,
  actor: Actor,
  at: StageRef,
  body: VerdictBody,
): Promise<Result<RecordedVerdict>> {
  const { by: named, ...v } = body;
  const target =
    body.item !== undefined ? { item: body.item, ...(body.plan ? { plan: body.plan } : {}) } : { plan: body.plan! };
  return record(ctx, actor, at, { ...v, target, named });
}

/** QA13: a maintainer discharges a case with a reason. */
export async function waiveQaCase(
  ctx: DeliveryContext,
  actor: Actor,
  at: StageRef,
  body: WaiveBody,
): Promise<Result<RecordedVerdict>> {
  const target: QaTarget = body.item !== undefined ? { item: body.item, plan: body.plan } : { plan: body.plan };
  return record(ctx, actor, at, { target, case: body.case, result: 'waived', evidence: body.reason, source: 'waiver' });
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

/** Who the verdict is recorded as: a waiver's maintainer (QA13), else the credential's own name (TR11). */
async function recordedBy(ctx: DeliveryContext, actor: Actor, s: Scoped, v: VerdictAsked): Promise<Result<string>> {
  if (v.result !== 'waived') return recorderOf(actor, s.run, v.named);
  return authorizeMaintainer(ctx, s.dr, actor, {
    action: `Waiving case ${v.case}`,
    command: `/yoke qa waive ${v.case}${v.target.plan ? ` --plan ${v.target.plan}` : ''} --reason "why"`,
  });
}

type PlanCases = { planId: string; cases: QaCase[] };

/** The one plan of the scope that holds the case, and the case, with its replacement checked (TR10). */
function caseIn(s: Scoped, v: VerdictAsked): Result<{ plan: PlanCases; theCase: QaCase }> {
  const plans =
    s.scope.kind === 'group' ? [{ planId: s.scope.group.planId, cases: s.scope.group.cases }] : s.scope.plans;
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
      waive: qaCommands(s.run.repo, s.run.id, s.stage).waive(plan.planId, v.replaces),
    });
  }
  return ok({ plan, theCase });
}

/** TR11: a manual case's verdict is a person's approval (a writer's own token); required evidence is there. */
async function verdictAllowed(
  ctx: DeliveryContext,
  actor: Actor,
  s: Scoped,
  { plan, theCase, v }: { plan: PlanCases; theCase: QaCase; v: VerdictAsked },
): Promise<Result<true>> {
  if (theCase.manual && v.result !== 'waived') {
    if (actor.role !== 'person')
      return refuse('person_token_required', {
        action: `Recording manual case ${v.case}`,
        repo: s.dr.repo.fullName,
        comment: null,
      });
    const permission = await ctx.forge.getPermission(s.dr.repo, actor.login);
    if (!canWrite(permission))
      return refuse('qa_approval_forbidden', {
        repo: s.dr.repo.fullName,
        login: actor.login,
        permission,
        case: v.case,
      });
  }
  if (v.result === 'pass' && theCase.evidence === 'required' && !v.evidence?.trim()) {
    const cmd = qaCommands(s.run.repo, s.run.id, s.stage);
    const again =
      s.scope.kind === 'group' ? cmd.groupManualCase(plan.planId, v.case) : cmd.itemManualCase(s.scope.item, v.case);
    return refuse('qa_evidence_required', { case: v.case, command: again });
  }
  return ok(true);
}

async function record(
  ctx: DeliveryContext,
  actor: Actor,
  at: StageRef,
  v: VerdictAsked,
): Promise<Result<RecordedVerdict>> {
  const got = await scopeAt(ctx, at, v.target);
  if (!got.ok) return got;
  const scoped = got.value;
  const { run, dr, stage, scope: s } = scoped;
  const by = await recordedBy(ctx, actor, scoped, v);
  if (!by.ok) return by;
  const holds = await runHolds(ctx, actor, scoped);
  if (!holds.ok) return holds;
  const found = caseIn(scoped, v);
  if (!found.ok) return found;
  const allowed = await verdictAllowed(ctx, actor, scoped, { ...found.value, v });
  if (!allowed.ok) return allowed;
  const { plan } = found.value;
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
    recordedBy: by.value,
    recordedAt: ctx.clock.now(),
  });
  // A command that addresses a notice answers it: a verdict or waiver recorded by its recipient.
  const subject = s.kind === 'group' ? s.group.id : s.item;
  for (const n of (await ctx.store.notices.forRun(run.id)).filter(
    (x) =>
      x.stage === stage && x.subject === subject && x.recipient === by.value && ['posted', 'edited'].includes(x.state),
  )) {
    await ctx.store.notices.update(n.id, {
      state: 'answered',
      detail: `${by.value} recorded ${v.case}`,
      at: ctx.clock.now(),
    });
  }
  await syncTrackingIssue(ctx, dr, run.id);
  return ok({ id, subject, plan: plan.planId, case: v.case, result: v.result });
}
