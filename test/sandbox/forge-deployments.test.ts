import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedForge } from '../../sandbox/forge-server.js';
import type { ForgeRepo } from '../../sandbox/forge/state.js';

// The embedded forge's deployments on their own, as GitHub behaves: a job
// that targets an environment with an app's protection rule gets a
// deployment, sends the app `deployment_protection_rule`, and waits until that
// app answers at the callback; only that app may answer, once; a rejection
// fails the job before its steps run; deployment statuses follow auto_inactive.

const key = generateKeyPairSync('rsa', { modulusLength: 2048 });
const dir = mkdtempSync(join(tmpdir(), 'yoke-forge-dep-'));
const WORKFLOW = [
  'name: deploy',
  'on:',
  '  workflow_dispatch:',
  '    inputs:',
  '      environment: { required: true, type: string }',
  'permissions: { contents: read, deployments: write }',
  'jobs:',
  '  deploy:',
  '    runs-on: ubuntu-latest',
  '    environment: ${{ inputs.environment }}',
  '    steps:',
  '      - run: echo deployed to ${{ inputs.environment }}',
  '',
].join('\n');

let forge: EmbeddedForge;
let repo: ForgeRepo;
let hooks: Server;
const events: { event: string; body: Record<string, any> }[] = [];
let api = '';

const call = (token: string, method: string, path: string, body?: unknown) =>
  fetch(`${api}${path}`, {
    method,
    headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

beforeAll(async () => {
  hooks = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      events.push({ event: String(req.headers['x-github-event']), body: JSON.parse(text) });
      res.end();
    });
  });
  await new Promise<void>((r) => hooks.listen(0, '127.0.0.1', () => r()));
  forge = new EmbeddedForge({
    dataDir: dir,
    appId: 7,
    appSlug: 'yoke-test',
    appPublicKey: key.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  });
  await forge.start();
  api = `${forge.url}/api/v3`;
  forge.webhook = { url: `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/`, secret: 's' };
  repo = forge.createRepo('acme/app', {
    files: { '.github/workflows/deploy.yml': WORKFLOW },
    installationId: 3,
    collaborators: { dev: 'write' },
  });
  forge.deployments.setEnvironment(repo, 'production', [{ id: 7, slug: 'yoke-test' }]);
  forge.deployments.setEnvironment(repo, 'staging');
});

afterAll(async () => {
  await forge.stop();
  await new Promise((r) => hooks.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const dispatch = async (environment: string) => {
  const before = forge.runner.runs.length;
  expect(
    (
      await call(forge.personalToken('dev'), 'POST', '/repos/acme/app/actions/workflows/deploy.yml/dispatches', {
        ref: 'main',
        inputs: { environment },
      })
    ).status,
  ).toBe(204);
  return forge.runner.runs[before]!;
};
const until = async (cond: () => boolean, what: string) => {
  for (const end = Date.now() + 15_000; !cond();) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe("the embedded forge's deployments", () => {
  it('DP03 a job on an environment without rules runs at once, its deployment written by Actions', async () => {
    const run = await dispatch('staging');
    await until(() => run.status === 'completed', 'the staging run');
    expect(run.conclusion).toBe('success');
    const d = forge.deployments.deployments.find((x) => x.environment === 'staging')!;
    expect([d.sha, d.creator.login, d.statuses.map((s) => s.state).reverse()]).toEqual([
      run.headSha,
      'github-actions[bot]',
      ['in_progress', 'success'],
    ]);
  });

  it('DP03 a job on a protected environment waits for the app; only that app may answer, once; an approval lets it run', async () => {
    const run = await dispatch('production');
    await until(() => events.some((e) => e.event === 'deployment_protection_rule'), 'the protection rule event');
    const e = events.find((x) => x.event === 'deployment_protection_rule')!.body;
    expect([e.action, e.environment, e.event, e.deployment.sha, e.deployment_callback_url]).toEqual([
      'requested',
      'production',
      'workflow_dispatch',
      run.headSha,
      `${api}/repos/acme/app/actions/runs/${run.id}/deployment_protection_rule`,
    ]);
    await new Promise((r) => setTimeout(r, 300));
    expect(run.status).toBe('waiting'); // as GitHub shows a run held at a protection rule
    const path = `/repos/acme/app/actions/runs/${run.id}/deployment_protection_rule`;
    // A person (even with write access) cannot answer an app's rule; another environment has nothing pending.
    expect(
      (await call(forge.personalToken('dev'), 'POST', path, { environment_name: 'production', state: 'approved' }))
        .status,
    ).toBe(403);
    const app = forge.state.installationToken(3).token;
    expect((await call(app, 'POST', path, { environment_name: 'staging', state: 'approved' })).status).toBe(422);
    expect(
      (await call(app, 'POST', path, { environment_name: 'production', state: 'approved', comment: 'QA settled' }))
        .status,
    ).toBe(204);
    // A second answer is refused.
    expect((await call(app, 'POST', path, { environment_name: 'production', state: 'rejected' })).status).toBe(422);
    await until(() => run.status === 'completed', 'the production run');
    expect(run.conclusion).toBe('success');
    const gate = forge.deployments.gates.find((g) => g.workflowRunId === run.id)!;
    expect(gate.answers).toEqual([{ app: 'yoke-test', state: 'approved', comment: 'QA settled' }]);
  });

  it('DP03 a rejection fails the job before any step runs', async () => {
    events.length = 0;
    const run = await dispatch('production');
    await until(() => events.some((e) => e.event === 'deployment_protection_rule'), 'the protection rule event');
    const app = forge.state.installationToken(3).token;
    expect(
      (
        await call(app, 'POST', `/repos/acme/app/actions/runs/${run.id}/deployment_protection_rule`, {
          environment_name: 'production',
          state: 'rejected',
          comment: 'not settled',
        })
      ).status,
    ).toBe(204);
    await until(() => run.status === 'completed', 'the rejected run');
    expect([run.conclusion, run.jobs]).toEqual(['failure', { deploy: 'failure' }]);
    const d = forge.deployments.deployments.find(
      (x) => x.id === forge.deployments.gates.find((g) => g.workflowRunId === run.id)!.deploymentId,
    )!;
    expect(d.statuses.map((s) => s.state).reverse()).toEqual(['waiting', 'failure']);
  });

  it('DP01 a deployment made through the API takes statuses; a success makes the earlier success of its environment inactive', async () => {
    const app = forge.state.installationToken(3).token;
    const sha = forge.runner.runs[0]!.headSha;
    const make = async () =>
      (
        (await (
          await call(app, 'POST', '/repos/acme/app/deployments', {
            ref: sha,
            environment: 'qa-env',
            auto_merge: false,
            required_contexts: [],
          })
        ).json()) as { id: number }
      ).id;
    const [a, b] = [await make(), await make()];
    for (const id of [a, b])
      expect((await call(app, 'POST', `/repos/acme/app/deployments/${id}/statuses`, { state: 'success' })).status).toBe(
        201,
      );
    const states = async (id: number) =>
      (
        (await (await call(app, 'GET', `/repos/acme/app/deployments/${id}/statuses`)).json()) as { state: string }[]
      ).map((s) => s.state);
    expect(await states(a)).toEqual(['inactive', 'success']);
    expect(await states(b)).toEqual(['success']);
    // A required context the forge never saw pass is GitHub's 409; an unknown ref its 422.
    expect(
      (
        await call(app, 'POST', '/repos/acme/app/deployments', {
          ref: sha,
          environment: 'qa-env',
          required_contexts: ['ci'],
        })
      ).status,
    ).toBe(409);
    expect((await call(app, 'POST', '/repos/acme/app/deployments', { ref: 'no-such-branch' })).status).toBe(422);
    // Someone without write access makes none.
    forge.user('visitor');
    expect(
      (await call(forge.personalToken('visitor'), 'POST', '/repos/acme/app/deployments', { ref: sha })).status,
    ).toBe(403);
  });
});
