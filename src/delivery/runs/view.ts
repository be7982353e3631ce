import { environmentUrl } from '../../fleet/notices/links.js';
import type { StageDeployment } from '../../store/delivery/stage-deployments.js';
import type { DeploymentRun } from '../../store/delivery/deployment-runs.js';
import { owedMembers } from '../closeout/closeout.js';
import { qaCommands } from '../gate/commands.js';
import type { DeliveryContext, DeliveryRepo } from '../context.js';
import type { GroupResult, StageEvaluation } from '../gate/evaluate.js';
import type { Wait } from '../gate/waits.js';
import { evaluateFrozenStage } from '../gate/stage.js';

// What `yoke deployment-runs get` and GET /yoke/api/deployment-runs/:id show:
// stages, members and their states, waits with the command that moves each,
// groups and verdicts. Read-only.

export interface StageView {
  name: string;
  kind: 'deploy' | 'qa';
  current: boolean;
  state: 'pending' | 'running' | 'succeeded' | 'failed' | 'waiting' | 'settled' | 'not_entered';
  attempts: number;
  detail: string | null;
  waits: Wait[];
  groups: GroupResult[];
  /** DP01: a deploy stage's GitHub deployments, one per start, oldest first, each with its environment's page. */
  deployments: {
    id: number;
    environment: string;
    state: string;
    workflowRunId: number | null;
    logUrl: string | null;
    url: string;
  }[];
}

export interface MemberView {
  item: string;
  issue: number;
  pr: number;
  removed: { by: string | null; reason: string | null } | null;
  /** Per QA stage entered: settled, waiting, refused or removed. */
  stages: Record<string, string>;
  delivery: 'owed' | 'delivered';
}

export interface DeploymentView {
  id: string;
  repo: string;
  commit: string;
  /** TR12: `closing` once every stage is done while some accepted member is still owed its close-out. */
  status: DeploymentRun['status'] | 'closing';
  /** While closing: the members still owed, and why each is not closed yet. */
  owed: { item: string; detail: string; command: string | null }[];
  creator: string | null;
  supersedes: string | null;
  trackingIssue: number | null;
  currentStage: string | null;
  stages: StageView[];
  members: MemberView[];
  verdicts: {
    stage: string;
    subject: string;
    plan: string;
    case: string;
    result: string;
    source: string;
    replaces: string | null;
    by: string;
  }[];
  /** What moves the run now: the current stage's waits, or the deploy command. */
  next: string[];
}

/** A stage's evaluation already made by the caller (a gate check's, after its writes): the view uses it rather than gathering the stage again. */
export interface KnownEvaluation {
  stage: string;
  evaluation: StageEvaluation;
}

/** Each stage of the run as the view shows it, and each member's state at the QA stages it entered. */
async function stageViews(
  at: { ctx: DeliveryContext; dr: DeliveryRepo; run: DeploymentRun },
  known: KnownEvaluation | undefined,
): Promise<{ stages: StageView[]; memberStates: Map<number, Record<string, string>> }> {
  const { ctx, dr, run } = at;
  const { store } = ctx;
  const records = new Map((await store.deploymentRuns.stages(run.id)).map((s) => [s.stage, s]));
  const byStage = new Map<string, StageDeployment[]>();
  for (const d of await store.stageDeployments.forRun(run.id))
    byStage.set(d.stage, [...(byStage.get(d.stage) ?? []), d]);
  const memberStates = new Map<number, Record<string, string>>();
  const stages: StageView[] = [];
  for (const [i, s] of run.settings.stages.entries()) {
    const rec = records.get(s.name);
    const current = run.status === 'active' && run.closingSince === null && i === run.currentStage;
    const base: Omit<StageView, 'state'> = {
      name: s.name,
      kind: s.kind,
      current,
      attempts: rec?.attempts ?? 0,
      detail: rec?.detail ?? null,
      waits: [],
      groups: [],
      deployments: [],
    };
    if (s.kind === 'deploy') {
      const state = rec ? (rec.state as StageView['state']) : 'pending';
      const deployments = (byStage.get(s.name) ?? []).map((d) => ({
        id: d.deploymentId,
        environment: d.environment,
        state: d.state,
        workflowRunId: d.workflowRunId,
        logUrl: d.logUrl,
        url: environmentUrl(ctx.webUrl ?? 'https://github.com', run.repo, d.environment),
      }));
      stages.push({ ...base, state, deployments });
      continue;
    }
    if (!rec) {
      stages.push({ ...base, state: i < run.currentStage ? 'settled' : 'not_entered' });
      continue;
    }
    const evaluation =
      known?.stage === s.name ? known.evaluation : await evaluateFrozenStage({ ctx, dr, run, stage: s.name });
    for (const m of evaluation.members)
      memberStates.set(m.issueNumber, { ...(memberStates.get(m.issueNumber) ?? {}), [s.name]: m.state });
    stages.push({
      ...base,
      state: rec.state === 'settled' ? 'settled' : 'waiting',
      detail: rec.refusal?.message ?? rec.detail,
      waits: rec.state === 'settled' ? [] : evaluation.waits,
      groups: evaluation.groups,
    });
  }
  return { stages, memberStates };
}

/** A closing run's members whose close-out is owed, each with where it stands and the command that recovers it. */
async function owedOf(ctx: DeliveryContext, dr: DeliveryRepo, run: DeploymentRun): Promise<DeploymentView['owed']> {
  const claims = new Map((await ctx.store.closeouts.forRun(run.id)).map((c) => [c.issueNumber, c]));
  return (await owedMembers(ctx, run)).map((n) => {
    const c = claims.get(n);
    const detail =
      c?.state === 'refused'
        ? (c.refusal?.message ?? 'its close-out was refused')
        : c?.state === 'running'
          ? 'its close-out is running'
          : 'its close-out has not started';
    return { item: dr.item(n), detail, command: c?.state === 'refused' ? (c.refusal?.recovery ?? null) : null };
  });
}

export async function viewDeploymentRun(
  ctx: DeliveryContext,
  dr: DeliveryRepo,
  run: DeploymentRun,
  known?: KnownEvaluation,
): Promise<DeploymentView> {
  const { store } = ctx;
  const { stages, memberStates } = await stageViews({ ctx, dr, run }, known);
  const closing = run.status === 'active' && run.closingSince !== null;
  const currentStage =
    run.status === 'active' && !closing ? (run.settings.stages[run.currentStage]?.name ?? null) : null;
  const cur = closing ? undefined : stages.find((s) => s.current);
  const owed = closing ? await owedOf(ctx, dr, run) : [];
  const next: string[] = closing
    ? owed.flatMap((o) => (o.command ? [o.command] : []))
    : !cur
      ? []
      : cur.kind === 'deploy'
        ? [qaCommands(run.repo, run.id, cur.name).deployStage()]
        : cur.state === 'not_entered'
          ? [qaCommands(run.repo, run.id, cur.name).get()]
          : cur.waits.map((w) => w.command);
  const runMembers = await store.deploymentRuns.members(run.id);
  const items = await store.deliveryItems.forIssues(
    run.repo,
    runMembers.map((m) => m.issueNumber),
  );
  return {
    id: run.id,
    repo: run.repo,
    commit: run.commit,
    status: closing ? 'closing' : run.status,
    owed,
    creator: run.creator,
    supersedes: run.supersedes,
    trackingIssue: run.trackingIssue,
    currentStage,
    stages,
    members: runMembers
      .map((m) => ({ m, delivery: items.get(m.issueNumber)?.state ?? 'owed' }))
      .map(({ m, delivery }) => ({
        item: dr.item(m.issueNumber),
        issue: m.issueNumber,
        pr: m.prNumber,
        removed: m.removedAt === null ? null : { by: m.removedBy, reason: m.removedReason },
        stages: memberStates.get(m.issueNumber) ?? {},
        delivery,
      })),
    verdicts: (await store.qa.verdicts([run.id])).map((v) => ({
      stage: v.stage,
      subject: v.groupId ?? dr.item(v.issueNumber!),
      plan: v.planId,
      case: v.caseId,
      result: v.result,
      source: v.source,
      replaces: v.replaces,
      by: v.recordedBy,
    })),
    next: [...new Set(next)],
  };
}
