import { describe, expect, it } from 'vitest';
import { reportDeployStage } from '../../../src/delivery/deployments/deploy-stage.js';
import { createDeploymentRun } from '../../../src/delivery/runs/deployment-runs.js';
import { judgeWorkflowStage } from '../../../src/delivery/deployments/stage-deployment.js';
import { DELIVERY, REPO, makeDeliveryHarness, type DeliveryHarness } from '../../helpers/delivery.js';

const WORKFLOW_DELIVERY = {
  delivery: {
    stages: [
      { name: 'staging', kind: 'deploy', workflow: 'deploy.yml' },
      { name: 'staging-qa', kind: 'qa' },
      { name: 'prod', kind: 'deploy', workflow: 'deploy.yml', environment: 'production' },
    ],
  },
};

async function newRun(h: DeliveryHarness, supersedes?: string): Promise<{ id: string; commit: string }> {
  // A run taking over another pins a later commit.
  if (supersedes) h.forge.commit(REPO, { 'CHANGELOG.md': supersedes });
  const run = await createDeploymentRun(h.fleet, { repo: REPO, supersedes });
  if (!run.ok) throw new Error(run.refusal.message);
  return { id: run.value.id, commit: run.value.commit };
}

const statesOf = (h: DeliveryHarness, id: number) =>
  h.forge.deployments
    .find((d) => d.id === id)!
    .statuses.map((s) => s.state)
    .reverse();

describe('deploy stages as GitHub deployments', () => {
  it('DP01 a command stage is a deployment of its environment at the pinned commit, its statuses mirroring the stage; a later success makes the earlier one inactive', async () => {
    const h = await makeDeliveryHarness();
    const { id, commit } = await newRun(h);
    const start = await reportDeployStage(h.fleet, id, 'staging', { phase: 'start', by: 'op' });
    const first = h.forge.deployments[0]!;
    expect(first).toMatchObject({
      repo: REPO,
      sha: commit,
      environment: 'staging',
      payload: { yoke_deployment_run: id, stage: 'staging', attempt: 1 },
      requiredContexts: [],
    });
    expect(start.ok && start.value).toMatchObject({
      state: 'running',
      command: './deploy.sh staging',
      deployment: { id: first.id, environment: 'staging' },
      env: { YOKE_DEPLOYMENT_ID: String(first.id), YOKE_ENVIRONMENT: 'staging' },
    });
    expect(statesOf(h, first.id)).toEqual(['in_progress']);
    // Started again before it ended (a driver that crashed mid-command): the old deployment is an error, a new one starts.
    await reportDeployStage(h.fleet, id, 'staging', { phase: 'start', by: 'op' });
    const second = h.forge.deployments[1]!;
    expect(statesOf(h, first.id)).toEqual(['in_progress', 'error']);
    await reportDeployStage(h.fleet, id, 'staging', { phase: 'end', outcome: 'succeeded', output: 'ok', by: 'op' });
    expect(statesOf(h, second.id)).toEqual(['in_progress', 'success']);
    expect(await h.store.stageDeployments.forRun(id)).toMatchObject([
      { deploymentId: first.id, state: 'error' },
      { deploymentId: second.id, state: 'success', environment: 'staging', commit },
    ]);
    // A failed command is a failed deployment.
    const { id: next } = await newRun(h, id);
    await reportDeployStage(h.fleet, next, 'staging', { phase: 'start', by: 'op' });
    await reportDeployStage(h.fleet, next, 'staging', { phase: 'end', outcome: 'failed', output: 'boom', by: 'op' });
    expect(statesOf(h, h.forge.deployments[2]!.id)).toEqual(['in_progress', 'failure']);
    await reportDeployStage(h.fleet, next, 'staging', { phase: 'start', by: 'op' });
    await reportDeployStage(h.fleet, next, 'staging', { phase: 'end', outcome: 'succeeded', output: 'ok', by: 'op' });
    // GitHub's auto_inactive: the environment's earlier success is now inactive.
    expect(statesOf(h, second.id)).toEqual(['in_progress', 'success', 'inactive']);
  });

  it('DP01 asks GitHub for the contexts the opt-in file requires; a deployment GitHub refuses fails the stage, with its reason', async () => {
    const h = await makeDeliveryHarness({
      config: { delivery: { ...DELIVERY, deployments: { required_contexts: ['ci/test'] } } },
    });
    const { id } = await newRun(h);
    h.forge.deploymentRefusal = { status: 409, message: 'Conflict: Commit status checks failed for c0.' };
    const start = await reportDeployStage(h.fleet, id, 'staging', { phase: 'start', by: 'op' });
    expect(start.ok && [start.value.state, start.value.detail]).toEqual([
      'failed',
      'GitHub made no deployment to staging: Conflict: Commit status checks failed for c0. (409)',
    ]);
    expect(await h.store.deploymentRuns.stage(id, 'staging')).toMatchObject({ state: 'failed' });
    h.forge.deploymentRefusal = undefined;
    await reportDeployStage(h.fleet, id, 'staging', { phase: 'start', by: 'op' });
    expect(h.forge.deployments[0]!.requiredContexts).toEqual(['ci/test']);
  });

  it('DP02 a workflow stage is dispatched at a branch pinned to the commit and followed; its outcome is the run conclusion and the status the workflow wrote', async () => {
    const h = await makeDeliveryHarness({ config: WORKFLOW_DELIVERY });
    const { id, commit } = await newRun(h);
    const start = await reportDeployStage(h.fleet, id, 'staging', { phase: 'start', by: 'op' });
    const d = h.forge.deployments[0]!;
    expect(start.ok && start.value).toMatchObject({
      state: 'running',
      command: null,
      workflow: 'deploy.yml',
      deployment: { id: d.id, environment: 'staging', workflowRunId: null },
    });
    expect(h.forge.pinned).toEqual([{ repo: REPO, branch: `yoke/deploy/${id}`, sha: commit }]);
    expect(h.forge.dispatches).toEqual([
      {
        repo: REPO,
        workflow: 'deploy.yml',
        ref: `yoke/deploy/${id}`,
        inputs: { deployment_run_id: id, stage: 'staging', environment: 'staging', deployment_id: String(d.id) },
      },
    ]);
    // Started again (a lost answer, a driver that took over): the same workflow is followed, never dispatched twice.
    await reportDeployStage(h.fleet, id, 'staging', { phase: 'start', by: 'op' });
    expect([h.forge.dispatches.length, h.forge.deployments.length]).toEqual([1, 1]);
    // Nobody may report a workflow stage's outcome.
    expect(
      await reportDeployStage(h.fleet, id, 'staging', { phase: 'end', outcome: 'succeeded', output: '', by: 'op' }),
    ).toMatchObject({ ok: false, refusal: { code: 'deploy_stage_is_workflow' } });
    const follow = () => reportDeployStage(h.fleet, id, 'staging', { phase: 'follow' });
    expect(await follow()).toMatchObject({
      ok: true,
      value: { state: 'running', detail: 'the workflow run has not started yet' },
    });
    h.forge.workflowRuns.set(String(d.id), {
      id: 77,
      status: 'in_progress',
      conclusion: null,
      repositoryId: 1,
      event: 'workflow_dispatch',
      htmlUrl: 'https://github.com/acme/api/actions/runs/77',
    });
    expect(await follow()).toMatchObject({ ok: true, value: { state: 'running', deployment: { workflowRunId: 77 } } });
    expect(d.statuses[0]).toMatchObject({
      state: 'in_progress',
      logUrl: 'https://github.com/acme/api/actions/runs/77',
    });
    // The workflow writes its own success, then its run completes.
    d.statuses.unshift({ state: 'success', description: 'deployed', creator: 'github-actions[bot]' });
    h.forge.workflowRuns.set(String(d.id), {
      id: 77,
      status: 'completed',
      conclusion: 'success',
      repositoryId: 1,
      event: 'workflow_dispatch',
      headSha: commit,
    });
    const done = await follow();
    expect(done.ok && [done.value.state, done.value.nextStage]).toEqual(['succeeded', 'staging-qa']);
    expect(await h.store.stageDeployments.latest(id, 'staging')).toMatchObject({ state: 'success', workflowRunId: 77 });
    // Its answer lost, the same follow again answers as the first did.
    expect(await follow()).toEqual(done);
  });

  it('DP02 a workflow run that fails, or succeeds without writing success to its deployment, fails the stage and yoke writes the failure', async () => {
    const h = await makeDeliveryHarness({ config: WORKFLOW_DELIVERY });
    const { id } = await newRun(h);
    await reportDeployStage(h.fleet, id, 'staging', { phase: 'start', by: 'op' });
    const d = h.forge.deployments[0]!;
    h.forge.workflowRuns.set(String(d.id), {
      id: 78,
      status: 'completed',
      conclusion: 'success',
      repositoryId: 1,
      event: 'workflow_dispatch',
    });
    const quiet = await reportDeployStage(h.fleet, id, 'staging', { phase: 'follow' });
    expect(quiet.ok && [quiet.value.state, quiet.value.detail]).toEqual([
      'failed',
      'workflow run 78 succeeded, but wrote no status to its deployment, not "success"',
    ]);
    expect(statesOf(h, d.id)).toEqual(['in_progress', 'failure']);
    // Started again, a new deployment and a new dispatch; this one fails outright.
    await reportDeployStage(h.fleet, id, 'staging', { phase: 'start', by: 'op' });
    const again = h.forge.deployments[1]!;
    expect(h.forge.dispatches).toHaveLength(2);
    h.forge.workflowRuns.set(String(again.id), {
      id: 79,
      status: 'completed',
      conclusion: 'failure',
      repositoryId: 1,
      event: 'workflow_dispatch',
    });
    const failed = await reportDeployStage(h.fleet, id, 'staging', { phase: 'follow' });
    expect(failed.ok && [failed.value.state, failed.value.detail, failed.value.nextStage]).toEqual([
      'failed',
      'workflow run 79 ended failure',
      'staging',
    ]);
    expect(await h.store.deploymentRuns.stage(id, 'staging')).toMatchObject({ state: 'failed', attempts: 2 });
  });

  it("DP02 TR27 judges only what GitHub says: the conclusion, a status the workflow's own token wrote, and the commit the run ran", () => {
    const pinned = 'c'.repeat(40);
    const done = (conclusion: string, headSha = pinned) => ({
      kind: 'one' as const,
      run: { id: 5, status: 'completed', conclusion, repositoryId: 1, event: 'workflow_dispatch', headSha },
    });
    const by = (creator: string) => [{ state: 'success', creator, logUrl: null, environmentUrl: null }];
    expect(judgeWorkflowStage(done('success'), by('github-actions[bot]'), pinned).state).toBe('succeeded');
    // yoke's own status is never the workflow's word, nor is one a writer posted by hand on yoke's deployment.
    expect(judgeWorkflowStage(done('success'), by('yoke[bot]'), pinned).state).toBe('failed');
    expect(judgeWorkflowStage(done('success'), [...by('mallory'), ...by('yoke[bot]')], pinned)).toEqual({
      state: 'failed',
      detail: 'workflow run 5 succeeded, but wrote no status to its deployment, not "success"',
    });
    expect(judgeWorkflowStage(done('cancelled'), by('github-actions[bot]'), pinned)).toEqual({
      state: 'failed',
      detail: 'workflow run 5 ended cancelled',
    });
    // TR27: a run of another commit (the branch moved under it) deployed something else.
    expect(judgeWorkflowStage(done('success', 'd'.repeat(40)), by('github-actions[bot]'), pinned)).toEqual({
      state: 'failed',
      detail: 'workflow run 5 ran dddddddddddd, not the pinned commit cccccccccccc',
    });
    expect(judgeWorkflowStage({ kind: 'many', ids: [5, 6] }, [], pinned)).toEqual({
      state: 'failed',
      detail: "more than one workflow run of yoke's names this deployment (5, 6); yoke binds none of them",
    });
  });
});
