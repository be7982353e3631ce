import { redactSecrets } from '../redact.js';
import { z } from 'zod';
import { ok, type DeliveryContext, type Outcome } from './context.js';
import { runAtStage } from './deployment-runs.js';
import { advanceRun } from './stage.js';
import type { DeploymentRun } from '../store/deployments.js';
import { syncTrackingIssue } from './tracking.js';

// A deploy stage: whoever runs it (`yoke deploy stage run`, later the driver)
// asks for the command, runs it with the run id, stage and pinned commit in
// its environment, and reports the outcome. Success moves the run on.

export const DeployReport = z.discriminatedUnion('phase', [
  z.object({ phase: z.literal('start'), by: z.string().min(1).max(100).default('operator') }).strict(),
  z.object({ phase: z.literal('end'), outcome: z.enum(['succeeded', 'failed']), output: z.string().max(32_000).default(''), by: z.string().min(1).max(100).default('operator') }).strict(),
]);
export type DeployReport = z.infer<typeof DeployReport>;

export interface DeployStep {
  run: string;
  repo: string;
  stage: string;
  commit: string;
  command: string;
  /** What the command gets in its environment. */
  env: Record<string, string>;
  state: 'running' | 'succeeded' | 'failed';
  nextStage: string | null;
}

export async function reportDeployStage(ctx: DeliveryContext, runId: string, stageName: string, report: DeployReport): Promise<Outcome<DeployStep>> {
  // A repeat of a recorded success (its first answer was lost) answers as the first did, and changes nothing.
  const repeat = report.phase === 'end' && report.outcome === 'succeeded' ? (await recordedSuccess(ctx, runId, stageName)) : null;
  if (repeat) return ok(repeat);
  const got = await runAtStage(ctx, runId, stageName, 'deploy');
  if (!got.ok) return got;
  const { run, dr, stage } = got.value;
  const now = ctx.clock.now();
  const state = report.phase === 'start' ? 'running' : report.outcome;
  await ctx.store.deployments.setStage({ runId: run.id, stage: stageName, state, detail: report.phase === 'end' ? tail(report.output) : `started by ${report.by}`, bumpAttempts: report.phase === 'start', at: now });
  if (state === 'succeeded') await advanceRun(ctx, dr, run);
  await syncTrackingIssue(ctx, dr, run.id);
  return ok(deployStep((await ctx.store.deployments.get(run.id))!, stageName, stage.command, state));
}

/** What a report of a deploy stage answers: its command and environment, its state, and where the run is now. */
function deployStep(run: DeploymentRun, stageName: string, command: string, state: DeployStep['state']): DeployStep {
  return {
    run: run.id,
    repo: run.repo,
    stage: stageName,
    commit: run.commit,
    command,
    env: { YOKE_DEPLOYMENT_RUN_ID: run.id, YOKE_STAGE: stageName, YOKE_COMMIT: run.commit, YOKE_REPO: run.repo },
    state,
    nextStage: run.status === 'active' ? (run.settings.stages[run.currentStage]?.name ?? null) : null,
  };
}

/** The answer a deploy stage's success got, when that stage is done and the run has moved past it. */
async function recordedSuccess(ctx: DeliveryContext, runId: string, stageName: string): Promise<DeployStep | null> {
  const run = await ctx.store.deployments.get(runId);
  if (!run) return null;
  const index = run.settings.stages.findIndex((x) => x.name === stageName);
  const stage = run.settings.stages[index];
  if (!stage || stage.kind !== 'deploy' || (await ctx.store.deployments.stage(run.id, stageName))?.state !== 'succeeded') return null;
  if (run.status === 'active' && run.currentStage <= index) return null;
  return deployStep(run, stageName, stage.command, 'succeeded');
}

/** The end of a command's output: enough to see why it failed, small enough for an issue body. */
const tail = (output: string): string | null => {
  // It is published in the tracking issue: no secret shape survives, whatever the command printed.
  const t = redactSecrets(output).trim();
  if (!t) return null;
  const last = t.split('\n').slice(-3).join(' / ');
  return last.length > 300 ? `…${last.slice(-300)}` : last;
};
