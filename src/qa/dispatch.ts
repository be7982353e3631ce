import { ok, refuse, type DeliveryContext, type Outcome } from './context.js';
import { activeRun } from './deployment-runs.js';
import type { GroupResult, MemberResult, StageEvaluation, Triage, Wait } from './gate.js';
import { advanceRun, enterQaStage, evaluateFrozenStage } from './stage.js';
import { syncTrackingIssue } from './tracking.js';

// One dispatch: the gate check of one QA stage of one run. In order: freeze
// ownership for entering members, evaluate every member, wake the waiting
// ones, settle, and answer with what waits and the command that moves it.

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
  /** The stage the run is at after this dispatch. */
  nextStage: string | null;
}

export async function dispatchStage(ctx: DeliveryContext, runId: string, stageName: string): Promise<Outcome<DispatchAnswer>> {
  const got = await activeRun(ctx, runId);
  if (!got.ok) return got;
  const { run, dr } = got.value;
  const stages = run.settings.stages;
  const index = stages.findIndex((s) => s.name === stageName);
  if (index < 0) return refuse('deployment_stage_unknown', { run: run.id, stage: stageName, stages: stages.map((s) => s.name) });
  const current = stages[run.currentStage]!;
  if (index !== run.currentStage) return refuse('deployment_stage_not_current', { run: run.id, stage: stageName, current: current.name, kind: current.kind });
  const base = { run: run.id, stage: stageName, commit: run.commit, woken: [], waits: [], members: [], groups: [], capture: [], triage: [] };
  if (current.kind === 'deploy') return ok({ ...base, state: 'deploy', nextStage: stageName });

  await enterQaStage(ctx, dr, run, stageName);
  const evaluation = await evaluateFrozenStage(ctx, dr, run, stageName);
  const { store, clock } = ctx;
  const now = clock.now();
  const holders = new Map(store.qa.memberStages(run.id, stageName).map((m) => [dr.item(m.issueNumber), m.holder]));
  const woken = new Map<string, Woken>();
  store.write(() => {
    for (const f of evaluation.failureReviews) store.qa.openFailureReview({ ...f, runId: run.id, stage: stageName, at: now });
    // QA01/QA02/QA10: only item QA and refusals wake a member's holder, once per wait.
    for (const w of evaluation.waits.filter((x) => x.recipient === 'holder')) {
      const recipient = holders.get(w.subject) ?? 'unknown';
      if (!store.qa.recordWake({ runId: run.id, stage: stageName, recipient, subject: w.subject, waitKey: w.key, reason: w.code, wokenAt: now })) continue;
      const key = `${recipient}\u0000${w.subject}`;
      woken.set(key, { recipient, subject: w.subject, waits: [...(woken.get(key)?.waits ?? []), w] });
    }
    for (const m of evaluation.members.filter((x) => x.state === 'settled')) store.qa.markSettled(run.id, stageName, m.issueNumber, now);
    if (evaluation.settled) {
      for (const g of evaluation.groups) store.qa.closeGroup(g.id, 'passed', now);
      store.deployments.setStage({ runId: run.id, stage: stageName, state: 'settled', at: now });
    }
  });
  if (evaluation.settled) await advanceRun(ctx, dr, run);
  await syncTrackingIssue(ctx, dr, run.id);
  const after = store.deployments.get(run.id)!;
  return ok({
    ...base,
    state: evaluation.settled ? 'settled' : evaluation.failed ? 'failed' : 'waiting',
    woken: [...woken.values()],
    waits: evaluation.waits,
    members: evaluation.members.map((m) => ({ item: m.item, state: m.state })),
    groups: evaluation.groups.map((g) => ({ id: g.id, planId: g.planId, state: g.state, covered: g.covered })),
    capture: evaluation.capture,
    triage: evaluation.groups.flatMap((g) => (g.triage ? [g.triage] : [])),
    nextStage: after.status === 'active' ? (after.settings.stages[after.currentStage]?.name ?? null) : null,
  });
}
