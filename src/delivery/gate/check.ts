import { makeRefusal } from '../../kernel/codes/table.js';
import { deliverNotices, subjectsOf, type NoticeReport } from '../notices/deliver.js';
import type { DeploymentRun } from '../../store/delivery/deployment-runs.js';
import { BusyError } from './busy.js';
import {
  closeOutMembers,
  closeoutQueue,
  deferredItems,
  finishIfDelivered,
  type CloseoutReport,
} from '../closeout/closeout.js';
import { deliveryRepo, type DeliveryContext, type StageAt } from '../context.js';
import { activeRun } from '../runs/deployment-runs.js';
import type { GroupResult, MemberResult, StageEvaluation, Triage } from './evaluate.js';
import { closeoutRefusedWait, type Wait } from './waits.js';
import { advanceRun, enterQaStage, evaluateFrozenStage, gatherGate } from './stage.js';
import { evaluateStage } from './evaluate.js';
import { decideGateStep } from './step.js';
import { serialRun } from '../runs/run-lock.js';
import { syncTrackingIssue } from '../runs/tracking.js';

// One dispatch: the gate check of one QA stage of one run. In order: freeze
// ownership for entering members, evaluate every member, wake the waiting
// ones (notices), close accepted members within the budget, and answer with
// what waits and the command that moves it.

export interface Woken {
  recipient: string;
  subject: string;
  /** Why: the waits that woke it, each once (QA01, QA02). */
  waits: Wait[];
}

export interface DispatchAnswer {
  run: string;
  stage: string;
  commit: string;
  state: 'settled' | 'waiting' | 'failed' | 'deploy';
  woken: Woken[];
  waits: Wait[];
  members: Pick<MemberResult, 'item' | 'state'>[];
  groups: Pick<GroupResult, 'id' | 'planId' | 'state' | 'covered'>[];
  capture: StageEvaluation['capture'];
  triage: Triage[];
  notices: NoticeReport | null;
  closeout: CloseoutReport | null;
  /** The stage the run is at after this dispatch. */
  nextStage: string | null;
}

/** The answer to a check of a stage the run has already left: settled, naming where the run is now. */
function movedOn(run: DeploymentRun, stage: string, index: number): DispatchAnswer {
  const passed = run.status === 'succeeded' || (index >= 0 && run.currentStage > index);
  return {
    run: run.id,
    stage,
    commit: run.commit,
    state: passed ? 'settled' : 'waiting',
    woken: [],
    waits: [],
    members: [],
    groups: [],
    capture: [],
    triage: [],
    notices: null,
    closeout: null,
    nextStage: run.status === 'active' ? (run.settings.stages[run.currentStage]?.name ?? null) : null,
  };
}

/** The waits a refused close-out adds to its member's holder notice (DX03). */
async function closeoutWaits(
  ctx: DeliveryContext,
  run: DeploymentRun,
  stage: string,
  item: (n: number) => string,
): Promise<Map<string, Wait[]>> {
  const out = new Map<string, Wait[]>();
  for (const c of (await ctx.store.closeouts.forRun(run.id)).filter(
    (x) => x.stage === stage && x.state === 'refused' && x.refusal,
  )) {
    const subject = item(c.issueNumber);
    out.set(subject, [closeoutRefusedWait(subject, c.refusal!)]);
  }
  return out;
}

/** Posts, edits or withdraws a stage's notices as its evaluation and its refused close-outs say (QA01, DX03). */
async function noticeStage(at: StageAt, evaluation: StageEvaluation): Promise<NoticeReport> {
  const { ctx, dr, run, stage } = at;
  const subjects = await subjectsOf({ ctx, run, stage }, evaluation, await closeoutWaits(ctx, run, stage, dr.item));
  const closedGroups = new Set(
    (await ctx.store.qa.groups([run.id])).filter((g) => g.stage === stage && g.state === 'closed').map((g) => g.id),
  );
  return deliverNotices(at, subjects, closedGroups);
}

/** The gate check itself, shared by dispatch, verdict callbacks and the end of a plan execution. */
export function gateCheck(at: StageAt): Promise<DispatchAnswer> {
  const { ctx, run } = at;
  return serialRun(ctx.store, run.id, async () =>
    checkGate({ ...at, run: (await ctx.store.deploymentRuns.get(run.id)) ?? run }),
  );
}

async function checkGate(at: StageAt): Promise<DispatchAnswer> {
  const { ctx, dr, run, stage } = at;
  const { store, clock } = ctx;
  // A check queued behind another that settled this stage finds the run moved on: it answers so, and changes nothing.
  const index = run.settings.stages.findIndex((s) => s.name === stage);
  if (run.status !== 'active' || run.currentStage !== index) return movedOn(run, stage, index);
  const startedAt = clock.now();
  await enterQaStage({ ctx, dr, run, stage });
  // Gather once.
  const liveMembers = async () =>
    (await store.deploymentRuns.members(run.id))
      .filter((m) => m.removedAt === null)
      .map((m) => m.issueNumber)
      .join(',');
  const membersRead = await liveMembers();
  const gate = await gatherGate({ ctx, dr, run, stage });
  const deliveringExecution = (await store.executions.live(run.id, stage, clock.now())).some(
    (e) => e.kind === 'deployment-stage',
  );
  // Decide, purely.
  const evaluation = evaluateStage(gate);
  const step = decideGateStep({ runId: run.id, stage, gate, evaluation, deliveringExecution, now: clock.now() });
  const { settles } = step;
  // Write once.
  const woken = new Map<string, Woken>();
  await store.write(async (t) => {
    // DX12: members removed between the read and this write: the check is stale, nothing is written.
    if ((await liveMembers()) !== membersRead)
      throw new BusyError(makeRefusal('deployment_membership_changed', { run: run.id }));
    for (const f of step.failureReviews) await t.qa.openFailureReview(f);
    const fresh = new Set(await t.qa.recordWakes(step.wakes.map((w) => w.wake)));
    for (const { wake, wait } of step.wakes) {
      if (!fresh.has(wake)) continue;
      const key = `${wake.recipient}\u0000${wake.subject}`;
      woken.set(key, {
        recipient: wake.recipient,
        subject: wake.subject,
        waits: [...(woken.get(key)?.waits ?? []), wait],
      });
    }
    await t.qa.markSettled(run.id, stage, step.settledMembers, step.at);
    for (const g of step.passedGroups) await t.qa.closeGroup(g, 'passed', step.at);
    if (settles) await t.deploymentRuns.setStage({ runId: run.id, stage, state: 'settled', at: step.at });
    await t.deploymentRuns.setWaits(run.id, stage, step.waits);
  });
  // Wake the waiting before closing the accepted (QA01); a refused close-out then wakes its owner (DX03).
  const notices = await noticeStage(at, evaluation);
  const closeout = await closeOutMembers({ ctx, dr, run, stage }, startedAt);
  await finishIfDelivered(ctx, run.id);
  if (closeout.refused.length || closeout.closed.length) {
    const after = await noticeStage(at, evaluation);
    notices.posted.push(...after.posted);
    notices.edited += after.edited;
    notices.resolved += after.resolved;
  }
  if (settles) await advanceRun(ctx, dr, (await store.deploymentRuns.get(run.id))!);
  await syncTrackingIssue(ctx, dr, run.id, { stage, evaluation });
  const after = (await store.deploymentRuns.get(run.id))!;
  return {
    run: run.id,
    stage,
    commit: run.commit,
    state: settles ? 'settled' : evaluation.failed ? 'failed' : 'waiting',
    woken: [...woken.values()],
    waits: evaluation.waits,
    members: evaluation.members.map((m) => ({ item: m.item, state: m.state })),
    groups: evaluation.groups.map((g) => ({ id: g.id, planId: g.planId, state: g.state, covered: g.covered })),
    capture: evaluation.capture,
    triage: evaluation.groups.flatMap((g) => (g.triage ? [g.triage] : [])),
    notices,
    closeout,
    nextStage: after.status === 'active' ? (after.settings.stages[after.currentStage]?.name ?? null) : null,
  };
}

/**
 * A verdict callback or the end of a plan execution: a gate check, unless a
 * live deployment-stage execution still delivers the subject (DX05): then
 * nothing is closed and nobody is notified until it ends.
 */
export async function settleAfter(
  ctx: DeliveryContext,
  runId: string,
  stage: string,
  subject: string,
): Promise<DispatchAnswer | null> {
  const got = await activeRun(ctx, runId);
  if (!got.ok) return null;
  const { run, dr } = got.value;
  if (run.settings.stages[run.currentStage]?.name !== stage) return null;
  const deferred = await deferredItems(ctx, run, stage, dr.item);
  const group = (await ctx.store.qa.groups([run.id])).find((g) => g.id === subject);
  const items = group ? group.coveredItemIds.map(dr.item) : [subject];
  if (items.some((i) => deferred.has(i))) return null;
  try {
    return await gateCheck({ ctx, dr, run, stage });
  } catch (err) {
    // Busy: the next gate check (the driver's, the sweep's) settles it instead.
    if (err instanceof BusyError) return null;
    throw err;
  }
}

const refusalsOf = async (ctx: DeliveryContext, runId: string): Promise<string> =>
  (await ctx.store.closeouts.forRun(runId))
    .filter((c) => c.state === 'refused')
    .map((c) => `${c.issueNumber}:${c.refusal?.message ?? ''}`)
    .join('|');

/**
 * DX04/DX06: close-outs the budget skipped or a refusal held are tried again
 * by themselves, whatever stage the run has reached since.
 */
export async function sweepCloseouts(ctx: DeliveryContext): Promise<number> {
  let closed = 0;
  for (const run of (await ctx.store.deploymentRuns.list()).filter(
    (r) => r.status === 'active' || r.status === 'succeeded',
  )) {
    // A closing run whose last close-out landed just before a crash still succeeds.
    await finishIfDelivered(ctx, run.id);
    for (const stage of run.settings.stages.filter((s) => s.kind === 'qa').map((s) => s.name)) {
      if ((await closeoutQueue(ctx, run, stage)).length === 0) continue;
      const dr = await deliveryRepo(ctx, run.repo);
      if (!dr.ok) continue;
      closed += await serialRun(ctx.store, run.id, async () => {
        const refusedBefore = await refusalsOf(ctx, run.id);
        const report = await closeOutMembers({ ctx, dr: dr.value, run, stage }, ctx.clock.now());
        // TR12: a closing run succeeds once its last owed member is closed out.
        await finishIfDelivered(ctx, run.id);
        // Nothing closed and the same refusals stand: their notices stand too, so GitHub is not read again.
        if (report.closed.length === 0 && (await refusalsOf(ctx, run.id)) === refusedBefore) return 0;
        const evaluation = await evaluateFrozenStage({ ctx, dr: dr.value, run, stage });
        await noticeStage({ ctx, dr: dr.value, run, stage }, evaluation);
        await syncTrackingIssue(ctx, dr.value, run.id);
        return report.closed.length;
      });
    }
  }
  return closed;
}
