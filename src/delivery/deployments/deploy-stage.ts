import { redactSecrets } from '../../kernel/redact.js';
import { z } from 'zod';
import type { DeployStage } from '../../config/delivery.js';
import { type DeliveryContext } from '../context.js';
import { ok, refuse, type Result } from '../../kernel/result.js';
import { endStageDeployment, followWorkflowStage, startStageDeployment, type DeployAt } from './stage-deployment.js';
import { runAtStage } from '../runs/deployment-runs.js';
import { advanceRun } from '../gate/stage.js';
import type { DeploymentRun } from '../../store/delivery/deployment-runs.js';
import { syncTrackingIssue } from '../runs/tracking.js';

// A deploy stage: whoever runs it (`yoke deploy stage run`, the driver) starts
// it, which makes it a GitHub deployment (DP01). A `command:` stage runs its
// command there, with the run id, stage and pinned commit in its environment,
// and reports the outcome. A `workflow:` stage runs on Actions: the start
// dispatches it, and `follow` asks yoke to read where it stands (DP02). Success
// moves the run on.

export const DeployReport = z.discriminatedUnion('phase', [
  z.object({ phase: z.literal('start'), by: z.string().min(1).max(100).default('operator') }).strict(),
  z
    .object({
      phase: z.literal('end'),
      outcome: z.enum(['succeeded', 'failed']),
      output: z.string().max(32_000).default(''),
      by: z.string().min(1).max(100).default('operator'),
    })
    .strict(),
  z.object({ phase: z.literal('follow') }).strict(),
]);
export type DeployReport = z.infer<typeof DeployReport>;

export interface DeployStep {
  run: string;
  repo: string;
  stage: string;
  commit: string;
  /** A command stage's command (null for a workflow stage). */
  command: string | null;
  /** A workflow stage's workflow file (null for a command stage). */
  workflow: string | null;
  /** The GitHub deployment of this start, and its environment. */
  deployment: { id: number; environment: string; workflowRunId: number | null } | null;
  /** Why the stage stands where it does (a workflow still running, a failure). */
  detail: string | null;
  /** What the command gets in its environment. */
  env: Record<string, string>;
  state: 'running' | 'succeeded' | 'failed';
  nextStage: string | null;
}

export async function reportDeployStage(
  ctx: DeliveryContext,
  runId: string,
  stageName: string,
  report: DeployReport,
): Promise<Result<DeployStep>> {
  // A repeat of a recorded success (its first answer was lost) answers as the first did, and changes nothing.
  const repeat =
    (report.phase === 'end' && report.outcome === 'succeeded') || report.phase === 'follow'
      ? await recordedSuccess(ctx, runId, stageName)
      : null;
  if (repeat) return ok(repeat);
  const got = await runAtStage(ctx, runId, stageName, 'deploy');
  if (!got.ok) return got;
  const { run, dr, stage } = got.value;
  const outcome = await moveStage({ ctx, repo: dr.repo, run, stage }, report);
  if (!outcome.ok) return outcome;
  const { state, detail } = outcome.value;
  if (state !== 'running' || report.phase === 'start')
    await ctx.store.deploymentRuns.setStage({
      runId: run.id,
      stage: stageName,
      state,
      detail,
      bumpAttempts: report.phase === 'start',
      at: ctx.clock.now(),
    });
  if (state === 'succeeded') await advanceRun(ctx, dr, run);
  await syncTrackingIssue(ctx, dr, run.id);
  return ok(await deployStep(ctx, (await ctx.store.deploymentRuns.get(run.id))!, stage, { state, detail }));
}

/** What one report does to the stage and its GitHub deployment: the state it leaves, and why. */
async function moveStage(
  at: DeployAt,
  report: DeployReport,
): Promise<Result<{ state: DeployStep['state']; detail: string | null }>> {
  const { ctx, repo, run, stage } = at;
  const current = await ctx.store.stageDeployments.latest(run.id, stage.name);
  if (report.phase === 'start') {
    // A workflow already under way is followed, never dispatched again (a repeated start, a driver that took over).
    if (
      stage.workflow &&
      current?.state === 'in_progress' &&
      (await ctx.store.deploymentRuns.stage(run.id, stage.name))?.state === 'running'
    )
      return ok({ state: 'running', detail: `following deployment ${current.deploymentId}` });
    const attempt = ((await ctx.store.deploymentRuns.stage(run.id, stage.name))?.attempts ?? 0) + 1;
    const started = await startStageDeployment(at, { attempt, by: report.by });
    return ok(
      started.ok
        ? { state: 'running', detail: `started by ${report.by}` }
        : { state: 'failed', detail: started.detail },
    );
  }
  if (report.phase === 'end') {
    if (stage.workflow)
      return refuse('deploy_stage_is_workflow', { run: run.id, stage: stage.name, workflow: stage.workflow });
    const detail = tail(report.output);
    await endStageDeployment(ctx, repo, current, {
      succeeded: report.outcome === 'succeeded',
      detail: detail ?? report.outcome,
    });
    return ok({ state: report.outcome, detail });
  }
  if (!stage.workflow || !current) return refuse('deploy_stage_not_started', { run: run.id, stage: stage.name });
  const followed = await followWorkflowStage(ctx, repo, current);
  return ok({ state: followed.state, detail: followed.detail });
}

/** What a report of a deploy stage answers: its command or workflow, its deployment, its state, and where the run is now. */
async function deployStep(
  ctx: DeliveryContext,
  run: DeploymentRun,
  stage: DeployStage,
  { state, detail }: Pick<DeployStep, 'state' | 'detail'>,
): Promise<DeployStep> {
  const d = await ctx.store.stageDeployments.latest(run.id, stage.name);
  return {
    run: run.id,
    repo: run.repo,
    stage: stage.name,
    commit: run.commit,
    command: stage.command ?? null,
    workflow: stage.workflow ?? null,
    deployment: d ? { id: d.deploymentId, environment: d.environment, workflowRunId: d.workflowRunId } : null,
    detail,
    env: {
      YOKE_DEPLOYMENT_RUN_ID: run.id,
      YOKE_STAGE: stage.name,
      YOKE_COMMIT: run.commit,
      YOKE_REPO: run.repo,
      ...(d ? { YOKE_DEPLOYMENT_ID: String(d.deploymentId), YOKE_ENVIRONMENT: d.environment } : {}),
    },
    state,
    nextStage: run.status === 'active' ? (run.settings.stages[run.currentStage]?.name ?? null) : null,
  };
}

/** The answer a deploy stage's success got, when that stage is done and the run has moved past it. */
async function recordedSuccess(ctx: DeliveryContext, runId: string, stageName: string): Promise<DeployStep | null> {
  const run = await ctx.store.deploymentRuns.get(runId);
  if (!run) return null;
  const index = run.settings.stages.findIndex((x) => x.name === stageName);
  const stage = run.settings.stages[index];
  const rec = await ctx.store.deploymentRuns.stage(run.id, stageName);
  if (!stage || stage.kind !== 'deploy' || rec?.state !== 'succeeded') return null;
  if (run.status === 'active' && run.currentStage <= index) return null;
  return deployStep(ctx, run, stage, { state: 'succeeded', detail: rec.detail });
}

/** The end of a command's output: enough to see why it failed, small enough for an issue body. */
const tail = (output: string): string | null => {
  // It is published in the tracking issue: no secret shape survives, whatever the command printed.
  const t = redactSecrets(output).trim();
  if (!t) return null;
  const last = t.split('\n').slice(-3).join(' / ');
  return last.length > 300 ? `…${last.slice(-300)}` : last;
};
