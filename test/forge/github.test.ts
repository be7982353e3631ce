import nock from 'nock';
import { Octokit as RestOctokit } from '@octokit/rest';
import { describe, expect, it } from 'vitest';
import { isolateNock } from '../helpers/nock.js';
import { GitHubForge } from '../../src/forge/github/github.js';
import type { Octokit } from '../../src/forge/github/octokit.js';

// The writes an agent run leads to, against GitHub's REST paths (nock, every
// mock used, no network): a push token that can do nothing but push to one
// repository, and the claim PR opened as the app.

const API = 'https://api.github.com';
// Octokit logs each failed request to the console; the 404 below is asked for on purpose.
const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const client = (token: string) =>
  new RestOctokit({ auth: token, request: { retries: 0 }, log: quiet }) as unknown as Octokit;
const repo = { owner: 'acme', name: 'api', fullName: 'acme/api', installationId: 7 };

isolateNock();

describe('GitHubForge, for agent runs', () => {
  it('mints a push token for the one repository with contents: write and nothing else, asked with the app JWT', async () => {
    const bodies: unknown[] = [];
    nock(API, { reqheaders: { authorization: 'token app-jwt' } })
      .post('/app/installations/7/access_tokens', (b) => (bodies.push(b), true))
      .reply(201, {
        token: 'ghs_push',
        expires_at: '2026-12-01T11:00:00Z',
        permissions: { contents: 'write', metadata: 'read' },
        repository_selection: 'selected',
      });
    const forge = new GitHubForge({
      appOctokit: async () => client('app-jwt'),
      installationOctokit: async () => client('ghs_inst'),
      now: Date.now,
    });
    expect(await forge.mintPushToken(repo)).toEqual({ token: 'ghs_push', expiresAt: '2026-12-01T11:00:00Z' });
    expect(bodies).toEqual([{ repositories: ['api'], permissions: { contents: 'write' } }]);
  });

  it("opens the claim PR with the installation's token, so the repository's own workflows run on it", async () => {
    const bodies: unknown[] = [];
    nock(API, { reqheaders: { authorization: 'token ghs_inst' } })
      .post('/repos/acme/api/pulls', (b) => (bodies.push(b), true))
      .reply(201, { number: 12, html_url: 'https://github.com/acme/api/pull/12' });
    const forge = new GitHubForge({
      appOctokit: async () => client('app-jwt'),
      installationOctokit: async () => client('ghs_inst'),
      now: Date.now,
    });
    const pull = {
      head: 'yoke/3-r1',
      base: 'main',
      title: 'Add a word counter',
      body: 'Closes #3\n\ndone\n\nYoke-Run: r1',
    };
    expect(await forge.openPull(repo, pull)).toBe(12);
    expect(bodies).toEqual([pull]);
  });

  it('TR29 reads whether GitHub protects a branch (a rule or a ruleset), and knows a missing branch', async () => {
    const gh = nock(API, { reqheaders: { authorization: 'token ghs_inst' } });
    const branch = (name: string, covered: boolean) => ({
      name,
      commit: { sha: 'a'.repeat(40) },
      protected: covered,
      protection_url: `https://api.github.com/repos/acme/api/branches/${name}/protection`,
    });
    gh.get('/repos/acme/api/branches/release%2F1.x').reply(200, branch('release/1.x', true));
    gh.get('/repos/acme/api/branches/hotfix').reply(200, branch('hotfix', false));
    gh.get('/repos/acme/api/branches/gone').reply(404, { message: 'Branch not found' });
    const forge = new GitHubForge({
      appOctokit: async () => client('app-jwt'),
      installationOctokit: async () => client('ghs_inst'),
      now: Date.now,
    });
    expect([
      await forge.isBranchProtected(repo, 'release/1.x'),
      await forge.isBranchProtected(repo, 'hotfix'),
      await forge.isBranchProtected(repo, 'gone'),
    ]).toEqual([true, false, null]);
  });

  it('LD02 reads where a branch is now from its git ref, and knows a missing branch', async () => {
    const gh = nock(API, { reqheaders: { authorization: 'token ghs_inst' } });
    gh.get('/repos/acme/api/git/ref/heads%2Fmain').reply(200, {
      ref: 'refs/heads/main',
      node_id: 'REF_kwDO',
      url: 'https://api.github.com/repos/acme/api/git/refs/heads/main',
      object: { sha: 'b'.repeat(40), type: 'commit', url: 'https://api.github.com/repos/acme/api/git/commits/b' },
    });
    gh.get('/repos/acme/api/git/ref/heads%2Fgone').reply(404, { message: 'Not Found' });
    const forge = new GitHubForge({
      appOctokit: async () => client('app-jwt'),
      installationOctokit: async () => client('ghs_inst'),
      now: Date.now,
    });
    expect([await forge.readBranchTip(repo, 'main'), await forge.readBranchTip(repo, 'gone')]).toEqual([
      'b'.repeat(40),
      null,
    ]);
  });

  it("LD04 reads whether a ruleset requires the merge queue on a branch, from the branch's rules", async () => {
    const gh = nock(API, { reqheaders: { authorization: 'token ghs_inst' } });
    // As GitHub's OpenAPI documents the rules of a branch: each rule, with the ruleset it comes from.
    gh.get('/repos/acme/api/rules/branches/main')
      .query({ per_page: '100' })
      .reply(200, [
        {
          type: 'required_status_checks',
          ruleset_source_type: 'Repository',
          ruleset_source: 'acme/api',
          ruleset_id: 4,
        },
        {
          type: 'merge_queue',
          parameters: { merge_method: 'MERGE', grouping_strategy: 'ALLGREEN' },
          ruleset_source_type: 'Repository',
          ruleset_source: 'acme/api',
          ruleset_id: 5,
        },
      ]);
    gh.get('/repos/acme/api/rules/branches/dev')
      .query({ per_page: '100' })
      .reply(200, [{ type: 'deletion', ruleset_source_type: 'Repository', ruleset_source: 'acme/api', ruleset_id: 4 }]);
    gh.get('/repos/acme/api/rules/branches/gone').query({ per_page: '100' }).reply(404, { message: 'Not Found' });
    const forge = new GitHubForge({
      appOctokit: async () => client('app-jwt'),
      installationOctokit: async () => client('ghs_inst'),
      now: Date.now,
    });
    expect([
      await forge.requiresMergeQueue(repo, 'main'),
      await forge.requiresMergeQueue(repo, 'dev'),
      await forge.requiresMergeQueue(repo, 'gone'),
    ]).toEqual([true, false, null]);
  });

  it("reads what a merge onto a branch must meet: its rulesets' checks and queue, and its branch protection's checks", async () => {
    const gh = nock(API, { reqheaders: { authorization: 'token ghs_inst' } });
    gh.get('/repos/acme/api/rules/branches/main')
      .query({ per_page: '100' })
      .reply(200, [
        {
          type: 'required_status_checks',
          parameters: {
            strict_required_status_checks_policy: false,
            required_status_checks: [{ context: 'yoke/lander', integration_id: 4242 }, { context: 'ci/test' }],
          },
          ruleset_source_type: 'Repository',
          ruleset_source: 'acme/api',
          ruleset_id: 4,
        },
        {
          type: 'merge_queue',
          parameters: { merge_method: 'SQUASH', grouping_strategy: 'ALLGREEN' },
          ruleset_source_type: 'Organization',
          ruleset_source: 'acme',
          ruleset_id: 5,
        },
      ]);
    // Branch protection, as `GET /repos/{owner}/{repo}/branches/{branch}` shows it to anyone who can read the repository.
    gh.get('/repos/acme/api/branches/main').reply(200, {
      name: 'main',
      commit: { sha: 'a'.repeat(40) },
      protected: true,
      protection: {
        enabled: true,
        required_status_checks: {
          enforcement_level: 'non_admins',
          contexts: ['yoke/lander', 'lint'],
          checks: [
            { context: 'yoke/lander', app_id: null },
            { context: 'lint', app_id: 15368 },
          ],
        },
      },
      protection_url: `${API}/repos/acme/api/branches/main/protection`,
    });
    gh.get('/repos/acme/api/rules/branches/gone').query({ per_page: '100' }).reply(404, { message: 'Not Found' });
    const forge = new GitHubForge({
      appOctokit: async () => client('app-jwt'),
      installationOctokit: async () => client('ghs_inst'),
      now: Date.now,
    });
    expect(await forge.readBranchRules(repo, 'main')).toEqual({
      requiredChecks: [
        { context: 'yoke/lander', appId: 4242 },
        { context: 'ci/test', appId: null },
        { context: 'yoke/lander', appId: null },
        { context: 'lint', appId: 15368 },
      ],
      mergeQueue: { mergeMethod: 'SQUASH' },
    });
    expect(await forge.readBranchRules(repo, 'gone')).toBeNull();
  });

  it('LD04 reads a merge queue: its PRs in order by GraphQL, its merge groups from their refs, each group commit read once', async () => {
    const A = 'a'.repeat(40);
    const B = 'b'.repeat(40);
    const gh = nock(API, { reqheaders: { authorization: 'token ghs_inst' } });
    const asked: unknown[] = [];
    gh.post(
      '/graphql',
      (b: { query: string; variables: unknown }) => (
        asked.push(b.variables),
        /mergeQueue\(branch: \$branch\)/.test(b.query)
      ),
    )
      .times(2)
      .reply(200, {
        data: {
          repository: {
            mergeQueue: {
              entries: {
                nodes: [
                  { position: 2, pullRequest: { number: 8, headRefOid: B } },
                  { position: 1, pullRequest: { number: 7, headRefOid: A } },
                ],
              },
            },
          },
        },
      });
    const refs = [
      {
        ref: `refs/heads/gh-readonly-queue/main/pr-7-${A}`,
        node_id: 'R1',
        url: 'u',
        object: { type: 'commit', sha: 'g7', url: 'u' },
      },
      {
        ref: `refs/heads/gh-readonly-queue/main/pr-8-${B}`,
        node_id: 'R2',
        url: 'u',
        object: { type: 'commit', sha: 'g8', url: 'u' },
      },
      // A branch whose name only looks like a group's (another base branch's queue): not this queue's.
      {
        ref: `refs/heads/gh-readonly-queue/main/x/pr-9-${A}`,
        node_id: 'R3',
        url: 'u',
        object: { type: 'commit', sha: 'g9', url: 'u' },
      },
    ];
    gh.get('/repos/acme/api/git/matching-refs/heads%2Fgh-readonly-queue%2Fmain%2F').times(2).reply(200, refs);
    gh.get('/repos/acme/api/git/commits/g7').reply(200, { sha: 'g7', parents: [{ sha: 'c0' }, { sha: A }] });
    gh.get('/repos/acme/api/git/commits/g8').reply(200, { sha: 'g8', parents: [{ sha: 'g7' }, { sha: B }] });
    const forge = new GitHubForge({
      appOctokit: async () => client('app-jwt'),
      installationOctokit: async () => client('ghs_inst'),
      now: Date.now,
    });
    const want = {
      entries: [
        { pr: 7, headSha: A },
        { pr: 8, headSha: B },
      ],
      groups: [
        { pr: 7, headSha: A, sha: 'g7', parent: 'c0' },
        { pr: 8, headSha: B, sha: 'g8', parent: 'g7' },
      ],
    };
    expect(await forge.readMergeQueue(repo, 'main')).toEqual(want);
    // The second read asks for the queue and its refs again, but not for commits it has read.
    expect(await forge.readMergeQueue(repo, 'main')).toEqual(want);
    expect(asked).toEqual([
      { owner: 'acme', name: 'api', branch: 'main' },
      { owner: 'acme', name: 'api', branch: 'main' },
    ]);
  });

  it('LD04 adds a PR to the merge queue at the head its lander judged; a refusal in GraphQL errors comes back as data', async () => {
    const gh = nock(API, { reqheaders: { authorization: 'token ghs_inst' } });
    const sent: { query: string; variables: Record<string, unknown> }[] = [];
    const record = (b: { query: string; variables: Record<string, unknown> }) => (sent.push(b), true);
    gh.post('/graphql', record).reply(200, {
      data: { repository: { pullRequest: { id: 'PR_kw7', headRefOid: 'a'.repeat(40) } } },
    });
    gh.post('/graphql', record).reply(200, { data: { enqueuePullRequest: { mergeQueueEntry: { position: 1 } } } });
    gh.post('/graphql', record).reply(200, {
      data: { repository: { pullRequest: { id: 'PR_kw8', headRefOid: 'c'.repeat(40) } } },
    });
    gh.post('/graphql', record).reply(200, {
      data: { enqueuePullRequest: null },
      errors: [
        { type: 'UNPROCESSABLE', path: ['enqueuePullRequest'], message: 'Head sha did not match expected head oid' },
      ],
    });
    gh.post('/graphql', record).reply(200, { data: { repository: { pullRequest: null } } });
    const forge = new GitHubForge({
      appOctokit: async () => client('app-jwt'),
      installationOctokit: async () => client('ghs_inst'),
      now: Date.now,
    });
    expect(await forge.enqueuePullRequest(repo, 7, 'a'.repeat(40))).toEqual({ ok: true });
    expect(await forge.enqueuePullRequest(repo, 8, 'b'.repeat(40))).toEqual({
      ok: false,
      status: 422,
      message: 'Head sha did not match expected head oid',
    });
    expect(await forge.enqueuePullRequest(repo, 9, 'b'.repeat(40))).toEqual({
      ok: false,
      status: 404,
      message: '#9 is not a pull request here',
    });
    expect(sent.map((b) => b.variables)).toEqual([
      { owner: 'acme', name: 'api', number: 7 },
      { id: 'PR_kw7', head: 'a'.repeat(40) },
      { owner: 'acme', name: 'api', number: 8 },
      { id: 'PR_kw8', head: 'b'.repeat(40) },
      { owner: 'acme', name: 'api', number: 9 },
    ]);
    expect(sent[1]!.query).toMatch(
      /^mutation\b[\s\S]*enqueuePullRequest\(input: \{ pullRequestId: \$id, expectedHeadOid: \$head \}\)/,
    );
  });

  it('QA21 reads who reacted to a notice, asking for the list only when someone did', async () => {
    const gh = nock(API, { reqheaders: { authorization: 'token ghs_inst' } });
    gh.get('/repos/acme/api/issues/comments/5').reply(200, { id: 5, body: 'notice', reactions: { total_count: 0 } });
    gh.get('/repos/acme/api/issues/comments/6').reply(200, { id: 6, body: 'notice', reactions: { total_count: 2 } });
    gh.get('/repos/acme/api/issues/comments/6/reactions')
      .query({ per_page: '100' })
      .reply(200, [
        { id: 1, content: '+1', user: { login: 'bystander' } },
        { id: 2, content: 'eyes', user: { login: 'alice' } },
      ]);
    gh.get('/repos/acme/api/issues/comments/7').reply(404, { message: 'Not Found' });
    const forge = new GitHubForge({
      appOctokit: async () => client('app-jwt'),
      installationOctokit: async () => client('ghs_inst'),
      now: Date.now,
    });
    expect(await forge.readComment(repo, 5)).toEqual({ reactors: [] });
    expect(await forge.readComment(repo, 6)).toEqual({ reactors: ['bystander', 'alice'] });
    expect(await forge.readComment(repo, 7)).toBeNull();
  });

  it("BU05 reads an issue's graph from its summaries, and which open issues block it, named here or in another repository", async () => {
    const gh = nock(API, { reqheaders: { authorization: 'token ghs_inst' } });
    gh.get('/repos/acme/api/issues/7').reply(200, {
      number: 7,
      state: 'open',
      user: { login: 'maint' },
      labels: [],
      issue_dependencies_summary: { blocked_by: 2, total_blocked_by: 3, blocking: 0, total_blocking: 0 },
      sub_issues_summary: { total: 4, completed: 1, percent_completed: 25 },
    });
    gh.get('/repos/acme/api/issues/8').reply(200, { number: 8, state: 'open', user: { login: 'maint' }, labels: [] });
    gh.get('/repos/acme/api/issues/7/dependencies/blocked_by')
      .query({ per_page: '100' })
      .reply(200, [
        { number: 3, state: 'open', repository_url: 'https://api.github.com/repos/acme/api' },
        { number: 4, state: 'closed', repository_url: 'https://api.github.com/repos/acme/api' },
        { number: 12, state: 'open', repository_url: 'https://api.github.com/repos/acme/web' },
      ]);
    gh.get('/repos/acme/api/issues/9/dependencies/blocked_by')
      .query({ per_page: '100' })
      .reply(404, { message: 'Not Found' });
    const forge = new GitHubForge({
      appOctokit: async () => client('app-jwt'),
      installationOctokit: async () => client('ghs_inst'),
      now: Date.now,
    });
    expect((await forge.getIssue(repo, 7))!.graph).toEqual({ blockedBy: 2, openSubIssues: 3 });
    expect((await forge.getIssue(repo, 8))!.graph).toBeUndefined();
    expect(await forge.listBlockers(repo, 7)).toEqual(['#3', 'acme/web#12']);
    expect(await forge.listBlockers(repo, 9)).toBeNull();
  });

  it('TR05 reads who added a label from its newest labeled event, and the issues changed since a time without their PRs', async () => {
    const gh = nock(API, { reqheaders: { authorization: 'token ghs_inst' } });
    const user = (login: string, type = 'User') => ({ login, type });
    gh.get('/repos/acme/api/issues/4/events')
      .query({ per_page: '100' })
      .times(2)
      .reply(200, [
        { event: 'labeled', actor: user('rita'), label: { name: 'qa:smoke', color: 'ededed' } },
        { event: 'unlabeled', actor: user('wendy'), label: { name: 'qa:smoke', color: 'ededed' } },
        { event: 'labeled', actor: user('wendy'), label: { name: 'qa:smoke', color: 'ededed' } },
        { event: 'labeled', actor: user('yoke[bot]', 'Bot'), label: { name: 'qa:checkout', color: 'ededed' } },
        { event: 'assigned', actor: user('maint') },
      ]);
    gh.get('/repos/acme/api/issues')
      .query({ state: 'all', since: '2026-12-01T10:00:00.000Z', sort: 'updated', direction: 'asc', per_page: '100' })
      .reply(200, [
        { number: 4, labels: [{ name: 'qa:smoke' }], updated_at: '2026-12-01T10:05:00Z' },
        { number: 9, labels: [], updated_at: '2026-12-01T10:06:00Z', pull_request: { url: 'x' } },
      ]);
    const forge = new GitHubForge({
      appOctokit: async () => client('app-jwt'),
      installationOctokit: async () => client('ghs_inst'),
      now: Date.now,
    });
    expect(await forge.labelledBy(repo, 4, 'qa:smoke')).toEqual({ login: 'wendy', isBot: false });
    expect(await forge.labelledBy(repo, 4, 'qa:checkout')).toEqual({ login: 'yoke[bot]', isBot: true });
    expect(await forge.listIssuesUpdatedSince(repo, Date.parse('2026-12-01T10:00:00Z'))).toEqual([
      { number: 4, labels: ['qa:smoke'], updatedAt: Date.parse('2026-12-01T10:05:00Z') },
    ]);
  });
});
