import { deploymentSettingsOf, environmentOf, type DeployStage } from '../../config/delivery.js';
import type { DeploymentStatusState, DeploymentStatusView, RepoRef, WorkflowRunView } from '../../forge/types.js';
import type { DeploymentRun } from '../../store/delivery/deployment-runs.js';
import type { StageDeployment } from '../../store/delivery/stage-deployments.js';
import type { DeliveryContext } from '../context.js';
import { errorText } from '../../kernel/error-text.js';

// DP01, DP02: what GitHub shows of a deploy stage. Each start is one GitHub
// deployment of the stage's environment at the run's pinned commit, whose
// statuses mirror the stage; a stage run on Actions is dispatched at that
// commit and followed to its end. The outcome of a workflow comes from its
// run's conclusion and the statuses it wrote, never from what anyone reports.

/** The branch a workflow stage is dispatched on: it points at the pinned commit, so the job deploys exactly that (and GitHub's protection rule is asked about exactly that). */
export const deployBranchOf = (runId: string): string => `yoke/deploy/${runId}`;

/** One deploy stage of one deployment run, in the repository it deploys. */
export interface DeployAt {
  ctx: DeliveryContext;
  repo: RepoRef;
  run: DeploymentRun;
  stage: DeployStage;
}

export type StartedDeployment = { ok: true; deployment: StageDeployment } | { ok: false; detail: string };

/** DP01: a new start of a deploy stage: the previous start's deployment (if it never ended) is marked an error, and a new one is created, in progress. */
export async function startStageDeployment(
  at: DeployAt,
  start: { attempt: number; by: string },
): Promise<StartedDeployment> {
  const { ctx, repo, run, stage } = at;
  const { attempt, by } = start;
  const previous = await ctx.store.stageDeployments.latest(run.id, stage.name);
  if (previous?.state === 'in_progress')
    await mirror(ctx, repo, previous, { state: 'error', description: `started again by ${by}`, logUrl: null });
  const environment = environmentOf(stage);
  const created = await ctx.forge.createDeployment(repo, {
    sha: run.commit,
    environment,
    description: `yoke ${run.id}: ${stage.name} (start ${attempt})`,
    payload: { yoke_deployment_run: run.id, stage: stage.name, attempt },
    requiredContexts: deploymentSettingsOf(run.settings).required_contexts,
  });
  if (!created.ok)
    return {
      ok: false,
      detail: `GitHub made no deployment to ${environment}: ${created.message}${created.status ? ` (${created.status})` : ''}`,
    };
  const now = ctx.clock.now();
  await ctx.store.stageDeployments.record({
    deploymentId: created.id,
    runId: run.id,
    stage: stage.name,
    environment,
    commit: run.commit,
    workflow: stage.workflow ?? null,
    state: 'in_progress',
    createdAt: now,
  });
  const deployment = (await ctx.store.stageDeployments.latest(run.id, stage.name))!;
  await mirror(ctx, repo, deployment, {
    state: 'in_progress',
    description: `${stage.name} started by ${by}`,
    logUrl: null,
  });
  if (!stage.workflow) return { ok: true, deployment };
  // DP02: on Actions, at exactly the pinned commit; the deployment id in the run-name binds the workflow run to it.
  const branch = deployBranchOf(run.id);
  try {
    await ctx.forge.pinBranch(repo, branch, run.commit);
    await ctx.forge.dispatchWorkflow(repo, stage.workflow, branch, {
      deployment_run_id: run.id,
      stage: stage.name,
      environment,
      deployment_id: String(created.id),
    });
  } catch (err) {
    const detail = `GitHub did not start ${stage.workflow} on ${branch}: ${errorText(err)}`;
    await mirror(ctx, repo, deployment, { state: 'error', description: detail, logUrl: null });
    return { ok: false, detail };
  }
  return { ok: true, deployment };
}

/** DP01: the stage's end as a status of its deployment (a success makes the environment's earlier deployments inactive, as GitHub does). */
export async function endStageDeployment(
  ctx: DeliveryContext,
  repo: RepoRef,
  d: StageDeployment | undefined,
  { succeeded, detail }: { succeeded: boolean; detail: string },
): Promise<void> {
  if (d?.state === 'in_progress')
    await mirror(ctx, repo, d, { state: succeeded ? 'success' : 'failure', description: detail, logUrl: null });
}

export type FollowedWorkflow = { state: 'running'; detail: string } | { state: 'succeeded' | 'failed'; detail: string };

/** Who a workflow's own GITHUB_TOKEN writes as: the only author of a status that is the workflow's word. */
export const WORKFLOW_LOGIN = 'github-actions[bot]';

/**
 * DP02, a pure decision: where a workflow stage stands, from its workflow run
 * (null while GitHub lists none) and its deployment's statuses, newest first.
 * Success needs both the run's `success` conclusion and a success status the
 * workflow wrote on the deployment with its GITHUB_TOKEN: not yoke's own, and
 * not one a writer posted by hand; and the run must have run the pinned commit.
 */
export function judgeWorkflowStage(
  found: { kind: 'none' } | { kind: 'many'; ids: number[] } | { kind: 'one'; run: WorkflowRunView },
  statuses: readonly DeploymentStatusView[],
  pinned: string,
): FollowedWorkflow {
  if (found.kind === 'many')
    return {
      state: 'failed',
      detail: `more than one workflow run of yoke's names this deployment (${found.ids.join(', ')}); yoke binds none of them`,
    };
  if (found.kind === 'none') return { state: 'running', detail: 'the workflow run has not started yet' };
  const run = found.run;
  if (run.status !== 'completed') return { state: 'running', detail: `workflow run ${run.id} is ${run.status}` };
  const reported = statuses.find((s) => s.creator === WORKFLOW_LOGIN && s.state !== 'inactive');
  if (run.conclusion !== 'success')
    return { state: 'failed', detail: `workflow run ${run.id} ended ${run.conclusion ?? 'without a conclusion'}` };
  if (reported?.state !== 'success')
    return {
      state: 'failed',
      detail: `workflow run ${run.id} succeeded, but wrote ${reported ? `"${reported.state}"` : 'no status'} to its deployment, not "success"`,
    };
  // TR27: a deploy is bound to what it deployed: the run must have run the pinned commit itself.
  if (run.headSha !== pinned)
    return {
      state: 'failed',
      detail: `workflow run ${run.id} ran ${run.headSha ? run.headSha.slice(0, 12) : 'no commit GitHub names'}, not the pinned commit ${pinned.slice(0, 12)}`,
    };
  return { state: 'succeeded', detail: `workflow run ${run.id} succeeded` };
}

/** DP02: reads the stage's workflow run and deployment statuses, binds the run once found, and mirrors a failure the workflow did not write. */
export async function followWorkflowStage(
  ctx: DeliveryContext,
  repo: RepoRef,
  d: StageDeployment,
): Promise<FollowedWorkflow> {
  const found =
    d.workflowRunId !== null
      ? await boundRun(ctx, repo, d.workflowRunId)
      : await ctx.forge.findWorkflowRun(repo, d.workflow!, String(d.deploymentId), d.createdAt);
  if (found.kind === 'one' && d.workflowRunId === null) {
    await ctx.store.stageDeployments.setWorkflowRun(d.deploymentId, found.run.id, ctx.clock.now());
    // While it runs, the deployment links its log.
    if (found.run.htmlUrl && found.run.status !== 'completed')
      await mirror(ctx, repo, d, {
        state: 'in_progress',
        description: `workflow run ${found.run.id}`,
        logUrl: found.run.htmlUrl,
      });
  }
  const statuses =
    found.kind === 'one' && found.run.status === 'completed'
      ? await ctx.forge.listDeploymentStatuses(repo, d.deploymentId)
      : [];
  const judged = judgeWorkflowStage(found, statuses, d.commit);
  if (judged.state === 'running') return judged;
  const logUrl = found.kind === 'one' ? (found.run.htmlUrl ?? null) : null;
  const want: DeploymentStatusState = judged.state === 'succeeded' ? 'success' : 'failure';
  // The workflow's own status stands when it says what yoke concluded; otherwise yoke writes the outcome.
  const reported = statuses.find((s) => s.creator === WORKFLOW_LOGIN && s.state !== 'inactive');
  if (reported?.state === want)
    await ctx.store.stageDeployments.setState(d.deploymentId, want, logUrl, ctx.clock.now());
  else await mirror(ctx, repo, d, { state: want, description: judged.detail, logUrl });
  return judged;
}

async function boundRun(
  ctx: DeliveryContext,
  repo: RepoRef,
  id: number,
): Promise<{ kind: 'none' } | { kind: 'one'; run: WorkflowRunView }> {
  const run = await ctx.forge.getWorkflowRun(repo, id);
  return run ? { kind: 'one', run } : { kind: 'none' };
}

/** Writes a status on GitHub and the same state in the store (the source of truth behind what GitHub shows). */
async function mirror(
  ctx: DeliveryContext,
  repo: RepoRef,
  d: StageDeployment,
  status: { state: DeploymentStatusState; description: string; logUrl: string | null },
): Promise<void> {
  const { state, logUrl } = status;
  await ctx.forge.createDeploymentStatus(repo, d.deploymentId, status);
  if (state !== 'inactive') await ctx.store.stageDeployments.setState(d.deploymentId, state, logUrl, ctx.clock.now());
}
