import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { isolateNock } from '../helpers/nock.js';
import { API, nockForge, REPO } from '../helpers/github-forge.js';

// What `yoke doctor` reads of GitHub, against its REST paths (nock, every mock
// used, no network): the installation by the app's own credential, the
// secrets' names, and an environment's deployment branch policy.

const repo = REPO;
const forge = nockForge;

isolateNock();

describe('GitHubForge, for yoke doctor', () => {
  it("reads the repository's installation with the app's credential, and null where there is none", async () => {
    const gh = nock(API, { reqheaders: { authorization: 'token app-jwt' } });
    gh.get('/repos/acme/api/installation').reply(200, {
      id: 7,
      app_slug: 'yoke',
      permissions: { contents: 'write', metadata: 'read' },
      events: ['issues', 'push'],
    });
    gh.get('/repos/acme/api/installation').reply(404, { message: 'Not Found' });
    expect(await forge().readInstallation(repo)).toEqual({
      id: 7,
      permissions: { contents: 'write', metadata: 'read' },
      events: ['issues', 'push'],
    });
    expect(await forge().readInstallation(repo)).toBeNull();
  });

  it("lists the repository's secrets and its organization's by name; a user's repository has no organization secrets", async () => {
    const gh = nock(API, { reqheaders: { authorization: 'token ghs_inst' } });
    const secret = (name: string) => ({ name, created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z' });
    gh.get('/repos/acme/api/actions/secrets')
      .query({ per_page: 100 })
      .reply(200, { total_count: 1, secrets: [secret('ANTHROPIC_API_KEY')] });
    gh.get('/repos/acme/api/actions/organization-secrets')
      .query({ per_page: 100 })
      .reply(200, { total_count: 1, secrets: [secret('CODEX_API_KEY')] });
    expect(await forge().listSecretNames(repo)).toEqual(['ANTHROPIC_API_KEY', 'CODEX_API_KEY']);
    gh.get('/repos/acme/api/actions/secrets').query({ per_page: 100 }).reply(200, { total_count: 0, secrets: [] });
    gh.get('/repos/acme/api/actions/organization-secrets')
      .query({ per_page: 100 })
      .reply(404, { message: 'Not Found' });
    expect(await forge().listSecretNames(repo)).toEqual([]);
    // Without the secrets permission GitHub says 403: that is the caller's to report, never an empty list.
    gh.get('/repos/acme/api/actions/secrets')
      .query({ per_page: 100 })
      .reply(403, { message: 'Resource not accessible by integration' });
    await expect(forge().listSecretNames(repo)).rejects.toThrow(/Resource not accessible by integration/);
  });

  it("reads an environment's branch policy: any branch, protected ones, or the branch patterns listed (tags left out)", async () => {
    const gh = nock(API, { reqheaders: { authorization: 'token ghs_inst' } });
    const env = (policy: unknown) => ({ id: 1, name: 'production', deployment_branch_policy: policy });
    gh.get('/repos/acme/api/environments/production').reply(200, env(null));
    gh.get('/repos/acme/api/environments/production').reply(
      200,
      env({ protected_branches: true, custom_branch_policies: false }),
    );
    gh.get('/repos/acme/api/environments/production').reply(
      200,
      env({ protected_branches: false, custom_branch_policies: true }),
    );
    gh.get('/repos/acme/api/environments/production/deployment-branch-policies')
      .query({ per_page: 100 })
      .reply(200, {
        total_count: 2,
        branch_policies: [
          { id: 1, name: 'yoke/deploy/*', type: 'branch' },
          { id: 2, name: 'v*', type: 'tag' },
        ],
      });
    gh.get('/repos/acme/api/environments/staging').reply(404, { message: 'Not Found' });
    expect(await forge().readBranchPolicy(repo, 'production')).toEqual({ kind: 'all' });
    expect(await forge().readBranchPolicy(repo, 'production')).toEqual({ kind: 'protected' });
    expect(await forge().readBranchPolicy(repo, 'production')).toEqual({ kind: 'custom', branches: ['yoke/deploy/*'] });
    expect(await forge().readBranchPolicy(repo, 'staging')).toBeNull();
  });
});
