import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revParse } from '../../sandbox/git.js';
import { DEMO_ENGINE_CONFIG, DEMO_REPO, MAINTAINER, STATE_TOKEN, shippedWorkflow } from '../../sandbox/demo-repo.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import type { WorkflowRunRecord } from '../../sandbox/forge/actions-runner.js';
import { startDeliverySandbox, type DeliverySandbox } from '../helpers/delivery-sandbox.js';
import { unclaimedWarnings } from '../helpers/sandbox-log.js';

/** Warnings the tests below provoke, each asserted where it is. */
const CLAIMED_WARNINGS: string[] = ['[@octokit/webhooks] signature does not match event payload and secret'];

// DP02-DP04 end to end on the sandbox's Actions: templates/deploy.yml as the
// repository's deploy workflow, production behind yoke's protection rule.
// Someone deploys production by hand before any QA; the driver's staging
// deploy fails (exit 6) and is retried; production waits for yoke's approval
// once staging-qa settles; the same deploy by hand is then approved; a forged
// and a replayed protection-rule event change nothing.

const DEPLOY_SH = [
  '#!/usr/bin/env bash',
  'set -euo pipefail',
  // Staging is down until the operator brings it back (a file in the sandbox state says so).
  `if [ "$YOKE_ENVIRONMENT" = staging ] && [ ! -f "${STATE_TOKEN}/staging-up" ]; then echo "staging is down"; exit 1; fi`,
  `echo "$YOKE_COMMIT" > "${STATE_TOKEN}/on-$YOKE_ENVIRONMENT"`,
  '',
].join('\n');

const FILES = {
  '.github/yoke.yml': `${DEMO_ENGINE_CONFIG}delivery:
  stages:
    - { name: staging, kind: deploy, workflow: deploy.yml }
    - { name: staging-qa, kind: qa, allow_empty: true }
    - { name: production, kind: deploy, workflow: deploy.yml }
  steering: ${MAINTAINER}
`,
  '.github/workflows/deploy.yml': shippedWorkflow('deploy'),
  '.github/yoke/deploy.sh': DEPLOY_SH,
};

let ds: DeliverySandbox;
let sandbox: Sandbox;
let head: string;
const state = () => join(sandbox.dataDir, 'state');

/** Someone with write access runs the deploy workflow by hand on main (Actions, Run workflow). */
async function deployByHand(environment: string): Promise<WorkflowRunRecord> {
  const before = sandbox.forge.runner.runs.length;
  const res = await fetch(`${sandbox.forge.url}/api/v3/repos/${DEMO_REPO}/actions/workflows/deploy.yml/dispatches`, {
    method: 'POST',
    headers: { authorization: `token ${sandbox.maintainerToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ref: 'main', inputs: { environment } }),
  });
  expect(res.status).toBe(204);
  const run = sandbox.forge.runner.runs[before]!;
  await sandbox.waitUntil(() => run.status === 'completed', 30_000, `the hand-started deploy to ${environment} to end`);
  return run;
}

const gateOf = (run: WorkflowRunRecord) => sandbox.forge.deployments.gates.find((g) => g.workflowRunId === run.id)!;

beforeAll(async () => {
  ds = await startDeliverySandbox(FILES, async () => {}, 0);
  sandbox = ds.sandbox;
  head = revParse(sandbox.repo.gitDir, 'refs/heads/main')!;
}, 200_000);

afterAll(async () => {
  await ds?.stop();
});

describe('deploy stages on Actions, behind yoke’s protection rule', () => {
  it('DP03 a production deploy started by hand before any QA is rejected, naming what to run', async () => {
    const run = await deployByHand('production');
    expect([run.conclusion, run.jobs]).toEqual(['failure', { deploy: 'failure' }]);
    const gate = gateOf(run);
    expect(gate.answers.map((a) => [a.app, a.state])).toEqual([['yoke-sandbox', 'rejected']]);
    expect(gate.answers[0]!.comment).toBe(
      `yoke: No deployment run of ${DEMO_REPO} is pinned at ${head.slice(0, 12)}, so no staging-qa settled for it: production may not deploy it. To move it: Deliver that commit through yoke: \`yoke deployment-runs create ${DEMO_REPO} --commit ${head}\`, then \`yoke watch deploy -- RUN-ID\`; or deploy a commit whose staging-qa settled.`,
    );
    // The deploy step never ran.
    expect(existsSync(join(state(), 'on-production'))).toBe(false);
  });

  it('DP02 DP03 a deploy workflow that fails marks the stage failed and the driver exits 6; a hand-started production deploy meanwhile is rejected with the wait; once fixed, the driver resumes and production waits for yoke, which approves', async () => {
    const created = JSON.parse(
      (await ds.yoke(['deployment-runs', 'create', DEMO_REPO, '--commit', head, '--json'])).out,
    );
    const drive = () =>
      ds.yoke(['watch', 'deploy', '--json', '--driver', 'e2e', '--poll-seconds', '0.5', '--', created.id]);
    const failed = await drive();
    expect(failed.code).toBe(6);
    expect(failed.err).toContain(`Deploy stage staging of run ${created.id} failed: workflow run`);
    expect(await sandbox.runtime.store.deploymentRuns.stage(created.id, 'staging')).toMatchObject({ state: 'failed' });
    const first = (await sandbox.runtime.store.stageDeployments.forRun(created.id))[0]!;
    expect(first.state).toBe('failure');
    // The workflow wrote the failure to yoke's deployment itself.
    expect(sandbox.forge.deployments.deployments.find((d) => d.id === first.deploymentId)!.statuses[0]).toMatchObject({
      state: 'failure',
      creator: { login: 'github-actions[bot]' },
    });

    // Meanwhile someone deploys production by hand at the run's commit: rejected, naming the run, where it is and what moves it.
    const early = await deployByHand('production');
    expect(early.conclusion).toBe('failure');
    expect(gateOf(early).answers[0]!.comment).toBe(
      `yoke: Deployment run ${created.id} has not settled staging-qa at ${head.slice(0, 12)}, so production may not deploy it yet: the run is at staging. To move it: Run \`yoke watch deploy -- ${created.id}\`: once staging-qa settles, it deploys production itself.`,
    );

    writeFileSync(join(state(), 'staging-up'), '');
    const done = await drive();
    expect(done.code).toBe(0);
    expect((await sandbox.runtime.store.deploymentRuns.get(created.id))!.status).toBe('succeeded');
    expect((await sandbox.runtime.store.stageDeployments.forRun(created.id)).map((d) => [d.stage, d.state])).toEqual([
      ['staging', 'failure'],
      ['staging', 'success'],
      ['production', 'success'],
    ]);
    // Production's job waited at yoke's rule, and yoke approved it: staging-qa had settled at the very commit.
    const prod = sandbox.forge.runner.runs.filter(
      (r) =>
        r.workflow === 'deploy.yml' &&
        r.inputs.environment === 'production' &&
        r.inputs.deployment_run_id === created.id,
    );
    expect(prod.map((r) => [r.conclusion, r.ref, r.headSha])).toEqual([['success', `yoke/deploy/${created.id}`, head]]);
    expect(gateOf(prod[0]!).answers.map((a) => a.state)).toEqual(['approved']);
    expect(existsSync(join(state(), 'on-production'))).toBe(true);
  });

  it('DP03 the same production deploy by hand, now at a settled commit, is approved', async () => {
    const run = await deployByHand('production');
    expect(run.conclusion).toBe('success');
    expect(gateOf(run).answers.map((a) => [a.state, a.comment.startsWith('yoke: Deployment run ')])).toEqual([
      ['approved', true],
    ]);
  });

  it('DP04 a forged protection-rule event is refused, and a replayed one changes nothing', async () => {
    // Handled again, a request would be recorded anew (and GitHub would refuse yoke's second answer): the records say whether it was.
    const reviews = () => sandbox.runtime.store.stageDeployments.reviews(DEMO_REPO);
    // What the deploys before this test left settles first (a poll may still record the last one's answer).
    let before = await reviews();
    for (let i = 0; i < 20; i++) {
      await new Promise((r) => setTimeout(r, 500));
      const now = await reviews();
      if (JSON.stringify(now) === JSON.stringify(before)) break;
      before = now;
    }
    const answers = sandbox.forge.deployments.gates.map((g) => g.answers.length);
    const genuine = sandbox.forge.deliveries.filter((d) => d.event === 'deployment_protection_rule').at(-1)!;
    const post = (signature: string, id: string) =>
      fetch(`${sandbox.yokeUrl}/api/github/webhooks`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-github-event': 'deployment_protection_rule',
          'x-github-delivery': id,
          'x-hub-signature-256': signature,
        },
        body: genuine.payload,
      });
    expect((await post(`sha256=${'0'.repeat(64)}`, 'forged-1')).status).toBeGreaterThanOrEqual(400);
    expect(
      sandbox
        .logged('warn')
        .some((l) => l.msg.includes(CLAIMED_WARNINGS[0]!) && JSON.stringify(l).includes('forged-1')),
    ).toBe(true);
    expect((await post(genuine.signature, genuine.id)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect(await reviews()).toEqual(before);
    expect(sandbox.forge.deployments.gates.map((g) => g.answers.length)).toEqual(answers);
  });
});

describe('what yoke logged here', () => {
  it('holds no warning or error that no test here claimed', () => {
    expect(unclaimedWarnings(ds?.sandbox, CLAIMED_WARNINGS)).toEqual([]);
  });
});
