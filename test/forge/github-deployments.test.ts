import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { isolateNock } from '../helpers/nock.js';
import { API, nockForge, REPO } from '../helpers/github-forge.js';

// DP01-DP03 against GitHub's REST paths (nock, every mock used, no network):
// deployments, their statuses, a pinned branch, an environment's custom
// rules, and the protection rule's callback.

const repo = REPO;
const forge = nockForge;
const SHA = 'c'.repeat(40);

isolateNock();

describe('GitHubForge, for deployments', () => {
  it('DP01 creates a deployment of the pinned commit that GitHub may not merge into, with the contexts asked; a 409 comes back as data', async () => {
    const bodies: unknown[] = [];
    const gh = nock(API, { reqheaders: { authorization: 'token ghs_inst' } });
    gh.post('/repos/acme/api/deployments', (b) => (bodies.push(b), true)).reply(201, {
      id: 31,
      sha: SHA,
      environment: 'staging',
    });
    gh.post('/repos/acme/api/deployments').reply(409, { message: 'Conflict: Commit status checks failed for main.' });
    const d = {
      sha: SHA,
      environment: 'staging',
      description: 'yoke dr-1: staging (start 1)',
      payload: { yoke_deployment_run: 'dr-1', stage: 'staging', attempt: 1 },
      requiredContexts: ['ci'],
    };
    expect(await forge().createDeployment(repo, d)).toEqual({ ok: true, id: 31 });
    expect(bodies).toEqual([
      {
        ref: SHA,
        environment: 'staging',
        description: d.description,
        payload: d.payload,
        auto_merge: false,
        required_contexts: ['ci'],
      },
    ]);
    expect(await forge().createDeployment(repo, d)).toEqual({
      ok: false,
      status: 409,
      message: 'Conflict: Commit status checks failed for main.',
    });
  });

  it('DP01 writes statuses that make earlier deployments inactive on success, and lists them with who wrote them', async () => {
    const bodies: unknown[] = [];
    const gh = nock(API, { reqheaders: { authorization: 'token ghs_inst' } });
    gh.post('/repos/acme/api/deployments/31/statuses', (b) => (bodies.push(b), true)).reply(201, {
      id: 1,
      state: 'success',
    });
    gh.get('/repos/acme/api/deployments/31/statuses')
      .query({ per_page: '100' })
      .reply(200, [
        {
          id: 2,
          state: 'success',
          creator: { login: 'github-actions[bot]' },
          log_url: 'https://github.com/acme/api/actions/runs/9',
          environment_url: 'https://staging.acme.dev',
        },
        { id: 1, state: 'in_progress', creator: { login: 'yoke[bot]' } },
      ]);
    await forge().createDeploymentStatus(repo, 31, {
      state: 'success',
      description: 'deployed',
      logUrl: 'https://github.com/acme/api/actions/runs/9',
    });
    expect(bodies).toEqual([
      {
        state: 'success',
        description: 'deployed',
        log_url: 'https://github.com/acme/api/actions/runs/9',
        auto_inactive: true,
      },
    ]);
    expect(await forge().listDeploymentStatuses(repo, 31)).toEqual([
      {
        state: 'success',
        creator: 'github-actions[bot]',
        logUrl: 'https://github.com/acme/api/actions/runs/9',
        environmentUrl: 'https://staging.acme.dev',
      },
      { state: 'in_progress', creator: 'yoke[bot]', logUrl: null, environmentUrl: null },
    ]);
  });

  it('DP02 pins a branch at a commit, moving it when it is already there', async () => {
    const bodies: unknown[] = [];
    const gh = nock(API, { reqheaders: { authorization: 'token ghs_inst' } });
    gh.post('/repos/acme/api/git/refs', (b) => (bodies.push(b), true)).reply(422, {
      message: 'Reference already exists',
    });
    gh.patch('/repos/acme/api/git/refs/heads%2Fyoke%2Fdeploy%2Fdr-1', (b) => (bodies.push(b), true)).reply(200, {
      ref: 'refs/heads/yoke/deploy/dr-1',
    });
    await forge().pinBranch(repo, 'yoke/deploy/dr-1', SHA);
    expect(bodies).toEqual([
      { ref: 'refs/heads/yoke/deploy/dr-1', sha: SHA },
      { sha: SHA, force: true },
    ]);
  });

  it("DP05 reads an environment's enabled custom rules by app; a missing environment says so", async () => {
    const gh = nock(API, { reqheaders: { authorization: 'token ghs_inst' } });
    gh.get('/repos/acme/api/environments/production/deployment_protection_rules').reply(200, {
      total_count: 2,
      custom_deployment_protection_rules: [
        {
          id: 3,
          node_id: 'x',
          enabled: true,
          app: { id: 1, slug: 'yoke', integration_url: 'https://api.github.com/apps/yoke', node_id: 'y' },
        },
        {
          id: 4,
          node_id: 'z',
          enabled: false,
          app: { id: 2, slug: 'other', integration_url: 'https://api.github.com/apps/other', node_id: 'w' },
        },
      ],
    });
    gh.get('/repos/acme/api/environments/staging/deployment_protection_rules').reply(404, { message: 'Not Found' });
    expect(await forge().readEnvironmentRules(repo, 'production')).toEqual({ exists: true, ruleApps: ['yoke'] });
    expect(await forge().readEnvironmentRules(repo, 'staging')).toEqual({ exists: false });
  });

  it('DP03 answers a protection rule at the workflow run of the repository; a second answer GitHub refuses comes back as data', async () => {
    const bodies: unknown[] = [];
    const gh = nock(API, { reqheaders: { authorization: 'token ghs_inst' } });
    gh.post('/repos/acme/api/actions/runs/9/deployment_protection_rule', (b) => (bodies.push(b), true)).reply(204);
    gh.post('/repos/acme/api/actions/runs/9/deployment_protection_rule').reply(422, {
      message: 'No pending deployment protection rule',
    });
    const answer = { environment: 'production', state: 'approved' as const, comment: 'yoke: settled' };
    expect(await forge().reviewProtectionRule(repo, 9, answer)).toEqual({ ok: true });
    expect(bodies).toEqual([{ environment_name: 'production', state: 'approved', comment: 'yoke: settled' }]);
    expect(await forge().reviewProtectionRule(repo, 9, answer)).toEqual({
      ok: false,
      status: 422,
      message: 'No pending deployment protection rule',
    });
  });
});
