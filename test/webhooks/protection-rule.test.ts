import { createHmac } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { parseDeliverySettings } from '../../src/config/delivery.js';
import { ProtectionRulePayload } from '../../src/webhooks/payloads.js';
import {
  REPO,
  WEBHOOK_SECRET,
  github,
  makeProbot,
  mockToken,
  publishedPayload,
  yamlConfig,
  type ProbotHarness,
} from '../helpers/probot.js';
import { isolateNock } from '../helpers/nock.js';

// DP03, DP04 at the Probot level: a signed deployment_protection_rule event
// in, the one callback GitHub documents out (through yoke's own client, at
// the workflow run of the event's repository), and nothing for a forgery.

const CONFIG_RE = /^\/repos\/Codertocat\/Hello-World\/contents\/\.github(%2F|\/)yoke\.yml/;
const SETTLED = 'abc1234def5678abc1234def5678abc1234def56';
const YOKE_YML = [
  'auto: false',
  'dashboard_issue: false',
  'delivery:',
  '  stages:',
  '    - { name: staging, kind: deploy, workflow: deploy.yml }',
  '    - { name: staging-qa, kind: qa }',
  '    - { name: production, kind: deploy, workflow: deploy.yml }',
  '',
].join('\n');
const CALLBACK = (repo = REPO, run = 4242) =>
  `https://api.github.com/repos/${repo}/actions/runs/${run}/deployment_protection_rule`;

isolateNock({ unmatched: true });

/** GitHub's event, built on its published deployment payload (its repository, installation, sender and deployment shapes). */
function protectionEvent(
  over: { sha?: string; callback?: string; environment?: string; event?: string } = {},
): Record<string, any> {
  const base = publishedPayload('deployment', 'created');
  return {
    action: 'requested',
    environment: over.environment ?? 'production',
    event: over.event ?? 'workflow_dispatch',
    deployment_callback_url: over.callback ?? CALLBACK(),
    deployment: { ...base.deployment, sha: over.sha ?? SETTLED, environment: over.environment ?? 'production' },
    pull_requests: [],
    repository: base.repository,
    installation: base.installation,
    sender: base.sender,
  };
}

/** A deployment run of the repository whose staging-qa settled at SETTLED. */
async function seedSettledRun(h: ProbotHarness): Promise<void> {
  const settings = parseDeliverySettings(REPO, {
    stages: [
      { name: 'staging', kind: 'deploy', workflow: 'deploy.yml' },
      { name: 'staging-qa', kind: 'qa' },
      { name: 'production', kind: 'deploy', workflow: 'deploy.yml' },
    ],
  });
  if (settings.state !== 'valid') throw new Error('bad fixture');
  const now = h.clock.now();
  await h.rt.store.repos.ensure(REPO, 1, now);
  await h.rt.store.deploymentRuns.create({
    id: 'dr-settled',
    repo: REPO,
    commit: SETTLED,
    settings: settings.settings,
    creator: 'maint',
    supersedes: null,
    members: [{ issueNumber: 1, prNumber: 101 }],
    at: now,
  });
  await h.rt.store.deploymentRuns.setStage({ runId: 'dr-settled', stage: 'staging-qa', state: 'settled', at: now });
}

/** A yoke whose repository has a run settled at SETTLED, with GitHub ready to take one answer at run 4242; the answers it took. */
async function settledAndAnswering(): Promise<{ h: ProbotHarness; answers: Record<string, unknown>[] }> {
  const h = await makeProbot();
  await seedSettledRun(h);
  const answers: Record<string, unknown>[] = [];
  mockToken(github())
    .get(CONFIG_RE)
    .reply(...yamlConfig(YOKE_YML))
    .post(`/repos/${REPO}/actions/runs/4242/deployment_protection_rule`, (b) => (answers.push(b), true))
    .reply(204);
  return { h, answers };
}

/** GitHub delivers the event, signed. */
async function receive(h: ProbotHarness, id: string, payload: unknown): Promise<void> {
  const { text, signature } = signed(payload);
  await h.probot.webhooks.verifyAndReceive({
    id,
    name: 'deployment_protection_rule',
    payload: text,
    signature,
  } as never);
}

const signed = (payload: unknown) => {
  const text = JSON.stringify(payload);
  return { text, signature: `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(text).digest('hex')}` };
};

describe('the deployment_protection_rule webhook', () => {
  it('DP04 maps the event: the environment, the deployed commit, and the waiting run only from a callback of its own repository', () => {
    const parsed = ProtectionRulePayload.parse(protectionEvent());
    expect(parsed).toMatchObject({
      environment: 'production',
      sha: SETTLED,
      workflowRunId: 4242,
      repo: { fullName: REPO },
    });
    expect(
      ProtectionRulePayload.parse(protectionEvent({ callback: CALLBACK('mallory/evil') })).workflowRunId,
    ).toBeNull();
    expect(
      ProtectionRulePayload.parse(protectionEvent({ callback: 'https://evil.example/collect' })).workflowRunId,
    ).toBeNull();
    // GitHub Enterprise Server puts the API under /api/v3.
    expect(
      ProtectionRulePayload.parse(
        protectionEvent({
          callback: `https://ghe.example/api/v3/repos/${REPO}/actions/runs/7/deployment_protection_rule`,
        }),
      ).workflowRunId,
    ).toBe(7);
  });

  it('DP03 a signed request at a settled commit is approved through the documented callback; its replay changes nothing', async () => {
    const { h, answers } = await settledAndAnswering();
    const { text, signature } = signed(protectionEvent());
    await h.probot.webhooks.verifyAndReceive({
      id: 'dpr-1',
      name: 'deployment_protection_rule',
      payload: text,
      signature,
    } as never);
    expect(answers).toEqual([
      {
        environment_name: 'production',
        state: 'approved',
        comment: `yoke: Deployment run dr-settled settled staging-qa at ${SETTLED.slice(0, 12)}: production (stage production) may deploy it.`,
      },
    ]);
    // GH06: the same delivery again (a replay, a redelivery) is not even read.
    await h.probot.webhooks.verifyAndReceive({
      id: 'dpr-1',
      name: 'deployment_protection_rule',
      payload: text,
      signature,
    } as never);
    expect(answers).toHaveLength(1);
    expect(await h.rt.store.stageDeployments.reviews(REPO)).toMatchObject([
      {
        workflowRunId: 4242,
        decision: 'approved',
        code: 'protection_settled',
        deploymentRun: 'dr-settled',
        answer: 'answered',
      },
    ]);
  });

  it('TR40 a signed request from a pull_request_target job at a settled commit is rejected: its code need not be that commit', async () => {
    const { h, answers } = await settledAndAnswering();
    await receive(h, 'dpr-prt', protectionEvent({ event: 'pull_request_target' }));
    expect(answers).toEqual([
      {
        environment_name: 'production',
        state: 'rejected',
        comment:
          "yoke: A job started by pull_request_target asked to deploy to production of Codertocat/Hello-World: yoke approves only a job started by push or workflow_dispatch, whose code is the commit it deploys (a job of another event may check out code QA never saw). To move it: Deploy to production from a workflow started by push or workflow_dispatch (`on: workflow_dispatch`, as yoke's driver starts it).",
      },
    ]);
  });

  it('DP04 a forged event (bad signature) or one whose callback is another repository changes nothing and answers nothing', async () => {
    const h = await makeProbot();
    await seedSettledRun(h);
    const warn = vi.spyOn(h.rt.fleet.log, 'warn');
    const { text } = signed(protectionEvent());
    await expect(
      h.probot.webhooks.verifyAndReceive({
        id: 'dpr-forged',
        name: 'deployment_protection_rule',
        payload: text,
        signature: `sha256=${'0'.repeat(64)}`,
      } as never),
    ).rejects.toThrow();
    // Signed, but aimed at another repository's run: yoke would otherwise approve mallory's deploy with this repository's QA.
    const aimed = signed(protectionEvent({ callback: CALLBACK('mallory/evil', 1) }));
    await h.probot.webhooks.verifyAndReceive({
      id: 'dpr-aimed',
      name: 'deployment_protection_rule',
      payload: aimed.text,
      signature: aimed.signature,
    } as never);
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ delivery: 'dpr-aimed', callbackUrl: CALLBACK('mallory/evil', 1) }),
      'protection rule request whose callback is not a workflow run of its own repository; ignored',
    );
    expect(await h.rt.store.stageDeployments.reviews(REPO)).toEqual([]);
  });

  it('DP03 a hand-started deploy at a commit whose QA has not settled is rejected, naming what to run', async () => {
    const h = await makeProbot();
    await seedSettledRun(h);
    const answers: Record<string, unknown>[] = [];
    const other = 'fff1234def5678abc1234def5678abc1234def56';
    mockToken(github())
      .get(CONFIG_RE)
      .reply(...yamlConfig(YOKE_YML))
      .post(`/repos/${REPO}/actions/runs/4243/deployment_protection_rule`, (b) => (answers.push(b), true))
      .reply(204);
    const { text, signature } = signed(protectionEvent({ sha: other, callback: CALLBACK(REPO, 4243) }));
    await h.probot.webhooks.verifyAndReceive({
      id: 'dpr-2',
      name: 'deployment_protection_rule',
      payload: text,
      signature,
    } as never);
    expect(answers).toMatchObject([{ environment_name: 'production', state: 'rejected' }]);
    expect(String(answers[0]!.comment)).toContain(`yoke deployment-runs create ${REPO} --commit ${other}`);
  });
});
