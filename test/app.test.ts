import { issueDigest } from '../src/kernel/issue-digest.js';
import { runnerBundle } from '../src/agent/bundle.js';
import { createHmac } from 'node:crypto';
import nock from 'nock';
import { describe, expect, it, vi } from 'vitest';
import { encodeMarker } from '../src/forge/marker.js';
import { WATCHED_REFRESH_FACTOR } from '../src/forge/github/repo-reader.js';
import { phaseOf } from '../src/kernel/spread.js';
import {
  BOT,
  REPO,
  WEBHOOK_SECRET,
  github,
  makeProbot,
  mockToken,
  publishedPayload,
  yamlConfig,
  type ProbotHarness,
} from './helpers/probot.js';
import { isolateNock } from './helpers/nock.js';

// Probot-level tests: published webhook payloads in, the exact GitHub calls out.

const CONFIG_RE = /^\/repos\/Codertocat\/Hello-World\/contents\/\.github(%2F|\/)yoke\.yml/;
const HEAD = 'abc1234def5678abc1234def5678abc1234def56';
/** LD01: where the default branch is. */
const BASE = 'ba5e'.repeat(10);

isolateNock({ unmatched: true });

/** The app's installations, as every pass lists them. */
function mockInstallations(scope: nock.Scope): nock.Scope {
  return scope
    .get('/app/installations')
    .query(true)
    .reply(200, [{ id: 1, account: { login: 'Codertocat' } }], { etag: '"inst1"' });
}

/** The installations and the installation's repositories, as a pass lists them once its listing is due (SC10). */
function mockListing(scope: nock.Scope): nock.Scope {
  return mockInstallations(scope)
    .get('/installation/repositories')
    .query(true)
    .reply(
      200,
      {
        total_count: 1,
        repositories: [
          {
            id: 1296269,
            name: 'Hello-World',
            full_name: REPO,
            owner: { login: 'Codertocat' },
            archived: false,
            pushed_at: '2026-11-30T09:00:00Z',
          },
        ],
      },
      { etag: '"repos1"' },
    );
}

/** The probe of a repository read before: everything updated since the newest change it saw (or since its first read). */
const PROBE_QUERY = (q: Record<string, unknown>) =>
  q.state === 'all' &&
  q.sort === 'updated' &&
  q.direction === 'desc' &&
  typeof q.since === 'string' &&
  q.per_page === '100';

interface Read {
  /** A repository read before is probed first; here the probe lists a change, so it is read in full. */
  probed?: boolean;
  /** Where the default branch is (BASE unless said). */
  base?: string;
  /** How often the pass reads it: once, and once more before each merge it asks for. */
  baseReads?: number;
  /** Whether the opt-in file turns autoland on where claims are open (then the branch's rules are read). */
  autoland?: boolean;
  issues?: object[];
  pulls?: object[];
  /** A claim's files are read once per head: `cached` on a later read of the same head. */
  claims?: Record<number, { comments: object[]; reviews?: object[]; files?: object[] | 'cached' }>;
  recent?: object[];
}

function mockRepoRead(scope: nock.Scope, r: Read): nock.Scope {
  if (r.probed)
    scope
      .get('/repos/Codertocat/Hello-World/issues')
      .query(PROBE_QUERY)
      .reply(200, [{ number: 7, updated_at: new Date(Date.UTC(2030, 0, 1)).toISOString() }]);
  scope
    .get('/repos/Codertocat/Hello-World')
    .reply(200, { default_branch: 'main', full_name: REPO })
    .get('/repos/Codertocat/Hello-World/issues')
    .query({ state: 'open', labels: 'yoke:afk', per_page: '100' })
    .reply(200, r.issues ?? [])
    .get('/repos/Codertocat/Hello-World/pulls')
    .query({ state: 'open', per_page: '100' })
    .reply(200, r.pulls ?? []);
  // LD02: with claims open, where the base branch is now: read every pass, and again at the instant of a merge.
  if (Object.keys(r.claims ?? {}).length)
    scope
      .get('/repos/Codertocat/Hello-World/git/ref/heads%2Fmain')
      .times(r.baseReads ?? 1)
      .reply(200, { ref: 'refs/heads/main', object: { sha: r.base ?? BASE, type: 'commit' } });
  // LD04: with autoland on, whether a ruleset requires the merge queue there (none here), once a pass.
  if (Object.keys(r.claims ?? {}).length && r.autoland !== false)
    scope.get('/repos/Codertocat/Hello-World/rules/branches/main').query({ per_page: '100' }).reply(200, []);
  for (const [n, c] of Object.entries(r.claims ?? {})) {
    scope
      .get(`/repos/Codertocat/Hello-World/issues/${n}/comments`)
      .query({ per_page: '100' })
      .reply(200, c.comments)
      .get(`/repos/Codertocat/Hello-World/pulls/${n}/reviews`)
      .query({ per_page: '100' })
      .reply(200, c.reviews ?? []);
    if (c.files !== 'cached')
      scope
        .get(`/repos/Codertocat/Hello-World/pulls/${n}/files`)
        .query({ per_page: '100' })
        .reply(200, c.files ?? [{ filename: 'src/app.js' }]);
  }
  return scope
    .get('/repos/Codertocat/Hello-World/issues/comments')
    .query({ sort: 'created', direction: 'desc', per_page: '100' })
    .reply(200, r.recent ?? []);
}

/** The yoke/lander check run writes a pass makes: creates answered with id 5555, updates of it. */
function mockCheckRuns(
  scope: nock.Scope,
  writes: { method: string; body: Record<string, any> }[],
  calls: { create?: number; update?: number },
): nock.Scope {
  if (calls.create) {
    scope
      .post('/repos/Codertocat/Hello-World/check-runs', (b) => (writes.push({ method: 'POST', body: b }), true))
      .times(calls.create)
      .reply(201, { id: 5555 });
  }
  if (calls.update) {
    scope
      .patch('/repos/Codertocat/Hello-World/check-runs/5555', (b) => (writes.push({ method: 'PATCH', body: b }), true))
      .times(calls.update)
      .reply(200, { id: 5555 });
  }
  return scope;
}

/** The AFK run that opened claim PR #7 for issue #1, as yoke recorded it (ended). */
const AFK_RUN = 'r-afk-1';
async function seedAfkRun(h: ProbotHarness): Promise<void> {
  const at = h.clock.now() - 60_000;
  await h.rt.store.repos.ensure(REPO, 1, at);
  await h.rt.store.runs.insert({
    id: AFK_RUN,
    repo: REPO,
    kind: 'afk_auto',
    subject: 'issue#1',
    issueNumber: 1,
    prNumber: null,
    headSha: null,
    launchedAt: at,
    budgetDeadline: at + 60_000,
    launcher: 'actions',
    launcherRef: null,
    secretHash: null,
    capAtLaunch: 1,
    liveAtLaunch: 1,
  });
  await h.rt.store.runs.end(AFK_RUN, 'success', null, at);
}

/** A lander run of yoke's that reported this verdict for #7 at this head, and ended. */
async function seedVerdict(h: ProbotHarness, id: string, verdict: 'accept' | 'reject', sha = HEAD): Promise<void> {
  const at = h.clock.now() - 30_000;
  await h.rt.store.runs.insert({
    id,
    repo: REPO,
    kind: 'lander',
    subject: 'pr#7',
    issueNumber: 1,
    prNumber: 7,
    headSha: sha,
    launchedAt: at,
    budgetDeadline: at + 60_000,
    launcher: 'actions',
    launcherRef: null,
    secretHash: null,
    capAtLaunch: 1,
    liveAtLaunch: 1,
  });
  await h.rt.store.runs.setJudgedTree(id, BASE, []); // LD01: judged on the base the default branch is at
  await h.rt.store.runs.recordReport(id, { outcome: 'success', verdict, summary: 'tests' }, 0);
  await h.rt.store.runs.setVerdictComment(id, 2); // its marker is already on the PR
  await h.rt.store.runs.end(id, 'success', null, at);
}

const claimPull = (sha = HEAD) => ({
  number: 7,
  title: 'Fix the greeting',
  body: `Closes #1\n\nYoke-Run: ${AFK_RUN}`,
  head: { sha, ref: 'yoke/issue-1', repo: { full_name: REPO } },
  labels: [{ name: 'yoke:claim' }],
  draft: false,
  user: { login: 'yoke-agent' },
});

const ghComment = (id: number, login: string, body: string, type = 'User') => ({
  id,
  body,
  user: { login, type },
  created_at: new Date().toISOString(),
  html_url: `https://github.com/${REPO}/pull/7#issuecomment-${id}`,
  issue_url: `https://api.github.com/repos/${REPO}/issues/7`,
});

/** An opted-in repo whose command is refused before any permission check: a confused reaction and a reply. */
function mockRefusalReply(): string[] {
  const replies: string[] = [];
  mockToken(github())
    .get(CONFIG_RE)
    .reply(...yamlConfig('auto: true\ndashboard_issue: false\n'))
    .get('/repos/Codertocat/Hello-World/collaborators/Codertocat/permission')
    .reply(200, { permission: 'write', role_name: 'write' })
    .post('/repos/Codertocat/Hello-World/issues/comments/492700400/reactions', { content: 'confused' })
    .reply(201, {})
    .post('/repos/Codertocat/Hello-World/issues/1/comments', (b) => (replies.push(b.body), true))
    .reply(201, { id: 9003 });
  return replies;
}

async function receiveComment(h: ProbotHarness, body: string, id = 'delivery-1') {
  const payload = publishedPayload('issue_comment', 'created');
  payload.comment.body = body;
  payload.comment.created_at = new Date(h.clock.now() + 1000).toISOString();
  await h.probot.receive({ id, name: 'issue_comment', payload } as never);
  return payload;
}

describe('comment commands (Probot level)', () => {
  it('GH04 /yoke start from a writer is acknowledged, answered, and launched by the next pass as a workflow dispatch', async () => {
    const ISSUE_1 = {
      number: 1,
      state: 'open',
      title: 'Spelling error in the README file',
      body: 'It looks like you accidently spelled commit with two t.',
    };
    const h = await makeProbot();
    const dispatched: Record<string, unknown>[] = [];
    const replies: string[] = [];
    const scope = mockToken(github())
      .get('/repos/Codertocat/Hello-World/collaborators/Codertocat/permission')
      .reply(200, { permission: 'write', role_name: 'write', user: { login: 'Codertocat' } })
      .get(CONFIG_RE)
      .reply(...yamlConfig('auto: false\ndashboard_issue: false\n'))
      .get('/repos/Codertocat/Hello-World/issues/1')
      .reply(200, ISSUE_1)
      .post('/repos/Codertocat/Hello-World/issues/comments/492700400/reactions', { content: '+1' })
      .reply(201, { id: 1, content: '+1' })
      .post('/repos/Codertocat/Hello-World/issues/1/comments', (b) => (replies.push(b.body), true))
      .reply(201, { id: 9001 });
    mockListing(scope);
    const payload = publishedPayload('issue_comment', 'created');
    mockRepoRead(scope, {
      recent: [
        {
          ...ghComment(492700400, 'Codertocat', '/yoke start'),
          created_at: new Date(h.clock.now() + 1000).toISOString(),
        },
      ],
    })
      .get('/repos/Codertocat/Hello-World/issues/1')
      .reply(200, ISSUE_1)
      .post(
        '/repos/Codertocat/Hello-World/actions/workflows/yoke-run.yml/dispatches',
        (b) => (dispatched.push(b), true),
      )
      .reply(204);
    void payload;
    await receiveComment(h, '/yoke start');
    await h.settle();
    expect(replies).toEqual([
      '@Codertocat Queued a manual AFK run for #1; there is a free slot and money for it, so it launches on the next pass.',
    ]);
    expect(dispatched).toHaveLength(1);
    const run = (await h.rt.store.runs.listLive())[0]!;
    expect(dispatched[0]).toEqual({
      ref: 'main',
      inputs: {
        run_id: run.id,
        kind: 'afk_manual',
        subject: 'issue#1',
        head_sha: '',
        deadline: new Date(run.budgetDeadline).toISOString(),
        api_url: 'https://yoke.example.test',
        runner_sha256: (await runnerBundle()).sha256,
        limits: '{"max_turns":60}',
        // TR24: the issue as the writer's start approved it, which the runner checks before the agent starts.
        rejection: JSON.stringify({
          rejection: null,
          asks: [],
          approved: { issue: 1, digest: issueDigest(ISSUE_1.title, ISSUE_1.body) },
        }),
      },
    });
    // Found again by the poll, the same comment is not processed twice.
    expect((await h.rt.store.commands.get(492700400))?.receivedVia).toBe('webhook');
  });

  it('TR05 GH04 a user without write access makes yoke write nothing: no reply, no reaction, no effect', async () => {
    const h = await makeProbot();
    mockToken(github())
      .get(CONFIG_RE)
      .reply(...yamlConfig('auto: true\ndashboard_issue: false\n'))
      .get('/repos/Codertocat/Hello-World/collaborators/Codertocat/permission')
      .reply(200, { permission: 'read', role_name: 'read' });
    await h.rt.store.repos.ensure(REPO, 1, h.clock.now());
    await h.rt.store.repos.addFailure(REPO, 1, h.clock.now());
    await receiveComment(h, '/yoke reset');
    await receiveComment(h, '/yoke frobnicate everything', 'delivery-2');
    await h.settle();
    // Any write would have found no mock and been listed as unmatched after the test.
    expect((await h.rt.store.commands.get(492700400))?.outcome).toBe('command_forbidden');
    expect((await h.rt.store.repos.get(REPO))?.pausedSince).not.toBeNull();
  });

  it('GH04 an unknown command word from a writer is answered with the commands that exist', async () => {
    const h = await makeProbot();
    const replies = mockRefusalReply();
    await receiveComment(h, '/yoke deploy everything');
    expect(replies[0]).toContain('`/yoke deploy everything` is not a yoke command.');
    expect(replies[0]).toContain(
      '/yoke start, /yoke start <instructions>, /yoke fix <what to change>, /yoke land, /yoke auto on, /yoke auto off, /yoke reset, /yoke status',
    );
  });

  it('GH04 an oversized comment is refused, not parsed', async () => {
    const h = await makeProbot();
    const replies = mockRefusalReply();
    await receiveComment(h, `/yoke start\n${'x'.repeat(20_000)}`);
    expect(replies[0]).toContain('longer than 10000 characters');
  });

  it('GH01 a command in a repository that has not opted in is not answered: yoke does not touch it', async () => {
    const h = await makeProbot();
    mockToken(github())
      .get(CONFIG_RE)
      .reply(404, { message: 'Not Found' })
      .get(/^\/repos\/Codertocat\/\.github\/contents\/\.github(%2F|\/)yoke\.yml/)
      .reply(404, { message: 'Not Found' });
    await receiveComment(h, '/yoke start');
    await h.settle();
    expect(await h.rt.store.commands.count()).toBe(0);
  });

  it('GH06 a repeated delivery id changes nothing, and a bad signature is refused before any handler runs', async () => {
    const h = await makeProbot();
    const replies: string[] = [];
    mockToken(github())
      .get(CONFIG_RE)
      .reply(...yamlConfig('auto: true\ndashboard_issue: false\n'))
      .get('/repos/Codertocat/Hello-World/collaborators/Codertocat/permission')
      .reply(200, { permission: 'write', role_name: 'write' })
      .post('/repos/Codertocat/Hello-World/issues/comments/492700400/reactions')
      .reply(201, {})
      .post('/repos/Codertocat/Hello-World/issues/1/comments', (b) => (replies.push(b.body), true))
      .reply(201, { id: 9005 });
    await receiveComment(h, '/yoke frobnicate', 'delivery-same');
    await receiveComment(h, '/yoke frobnicate', 'delivery-same');
    expect(replies).toHaveLength(1);

    // A redelivered kick changes nothing either: only the delivery id tells it apart (no comment id to dedupe on).
    const kicks = vi.spyOn(h.rt.engine, 'kick').mockResolvedValue(undefined as never);
    const labeled = publishedPayload('issues', 'labeled');
    await h.probot.receive({ id: 'delivery-label', name: 'issues', payload: labeled } as never);
    await h.probot.receive({ id: 'delivery-label', name: 'issues', payload: labeled } as never);
    expect(kicks).toHaveBeenCalledTimes(1);
    await h.probot.receive({ id: 'delivery-label-2', name: 'issues', payload: labeled } as never);
    expect(kicks).toHaveBeenCalledTimes(2);
    kicks.mockRestore();

    const payload = publishedPayload('issue_comment', 'created');
    payload.comment.id = 555;
    payload.comment.body = '/yoke reset';
    const text = JSON.stringify(payload);
    await expect(
      h.probot.webhooks.verifyAndReceive({
        id: 'forged',
        name: 'issue_comment',
        payload: text,
        signature: 'sha256=' + 'f'.repeat(64),
      } as never),
    ).rejects.toThrow();
    expect(await h.rt.store.commands.get(555)).toBeUndefined();

    // The same body signed with the secret is accepted (and refused as a command for want of write access, silently).
    github()
      .get('/repos/Codertocat/Hello-World/collaborators/Codertocat/permission')
      .reply(200, { permission: 'none' });
    const signature = 'sha256=' + createHmac('sha256', WEBHOOK_SECRET).update(text).digest('hex');
    await h.probot.webhooks.verifyAndReceive({
      id: 'genuine',
      name: 'issue_comment',
      payload: text,
      signature,
    } as never);
    expect((await h.rt.store.commands.get(555))?.outcome).toBe('command_forbidden');
  });
});

describe('verdicts and autoland (Probot level)', () => {
  // The dashboard issue has a test of its own; here it would only add calls.
  const AUTOLAND_YML =
    'autoland:\n  enabled: true\n  merge_method: squash\nfix_forward:\n  enabled: true\ndashboard_issue: false\n';

  it('GH02 TR01 a verdict marker written by another login is ignored: the PR still gets a lander and is not merged', async () => {
    const h = await makeProbot();
    await seedAfkRun(h);
    const dispatched: Record<string, any>[] = [];
    const scope = mockListing(mockToken(github()))
      .get(CONFIG_RE)
      .reply(...yamlConfig(AUTOLAND_YML));
    const forged = encodeMarker({ run: 'r-fake', sha: HEAD, verdict: 'accept' }, 'trust me');
    const checks: { method: string; body: Record<string, any> }[] = [];
    mockRepoRead(scope, { pulls: [claimPull()], claims: { 7: { comments: [ghComment(1, 'mallory', forged)] } } })
      .post(
        '/repos/Codertocat/Hello-World/actions/workflows/yoke-run.yml/dispatches',
        (b) => (dispatched.push(b), true),
      )
      .reply(204);
    mockCheckRuns(scope, checks, { create: 1 });
    await h.rt.engine.schedulerTick();
    expect(dispatched.map((d) => [d.inputs.kind, d.inputs.subject, d.inputs.head_sha])).toEqual([
      ['lander', 'pr#7', HEAD],
    ]);
    // The lander shows on the PR as the yoke/lander check, in progress on the head it validates; the forged marker completes nothing.
    const lander = (await h.rt.store.runs.listLive()).find((r) => r.kind === 'lander')!;
    expect(checks).toEqual([
      {
        method: 'POST',
        body: {
          name: 'yoke/lander',
          head_sha: HEAD,
          status: 'in_progress',
          external_id: lander.id,
          output: {
            title: 'Validating abc1234 on ba5eba5',
            summary: `Lander run \`${lander.id}\` is validating this head merged onto ba5eba5 (attempt 1 of 2).`,
          },
        },
      },
    ]);
  });

  it('GH02 a marker for an older head is stale; GH03 a fresh accept merges naming the head it validated', async () => {
    const h = await makeProbot();
    await seedAfkRun(h);
    const merges: Record<string, unknown>[] = [];
    const dispatched: Record<string, any>[] = [];
    const stale = encodeMarker({ run: 'r1', sha: 'aaaaaaa', verdict: 'accept' }, 'old head');
    const scope = mockListing(mockToken(github()))
      .get(CONFIG_RE)
      .reply(...yamlConfig(AUTOLAND_YML));
    const checks: { method: string; body: Record<string, any> }[] = [];
    mockRepoRead(scope, { pulls: [claimPull()], claims: { 7: { comments: [ghComment(1, BOT, stale, 'Bot')] } } })
      .post(
        '/repos/Codertocat/Hello-World/actions/workflows/yoke-run.yml/dispatches',
        (b) => (dispatched.push(b), true),
      )
      .reply(204);
    mockCheckRuns(scope, checks, { create: 1 });
    await h.rt.engine.schedulerTick();
    expect(dispatched).toHaveLength(1);
    expect(checks.map((c) => [c.method, c.body.status, c.body.conclusion])).toEqual([
      ['POST', 'in_progress', undefined],
    ]);

    // The lander reports accept (recorded in the store, its marker posted); the next pass merges at that sha.
    const lander = (await h.rt.store.runs.listLive()).find((r) => r.kind === 'lander')!;
    await h.rt.store.runs.recordReport(lander.id, { outcome: 'success', verdict: 'accept', summary: 'tests pass' }, 0);
    await h.rt.store.runs.setVerdictComment(lander.id, 2);
    const fresh = encodeMarker({ run: lander.id, sha: HEAD, verdict: 'accept' }, 'tests pass');
    const s2 = github(); // the app's installations stand in (SC10)
    mockRepoRead(s2, {
      probed: true,
      pulls: [claimPull()],
      claims: { 7: { comments: [ghComment(1, BOT, stale, 'Bot'), ghComment(2, BOT, fresh, 'Bot')], files: 'cached' } },
      baseReads: 2,
    })
      .put('/repos/Codertocat/Hello-World/pulls/7/merge', (b) => (merges.push(b), true))
      .reply(200, { merged: true, sha: 'mergedsha' })
      // The merged claim's issue now owes delivery, and shows it.
      .post('/repos/Codertocat/Hello-World/issues/1/labels', { labels: ['yoke:delivery-owed'] })
      .reply(200, []);
    mockCheckRuns(s2, checks, { update: 1 });
    await h.rt.store.sql.run("UPDATE runs SET status = 'ended', outcome = 'success'");
    await h.rt.engine.schedulerTick();
    expect(merges).toEqual([{ sha: HEAD, merge_method: 'squash' }]);
    // The same check run completes with the verdict yoke recorded.
    expect(checks[1]).toEqual({
      method: 'PATCH',
      body: {
        name: 'yoke/lander',
        status: 'completed',
        conclusion: 'success',
        completed_at: new Date(h.clock.now()).toISOString(),
        external_id: lander.id,
        output: {
          title: 'Accepted at abc1234 on ba5eba5',
          summary: `Lander run \`${lander.id}\` accepted this head merged onto ba5eba5, the base it would land on.\n\ntests pass`,
        },
      },
    });
    expect(await h.rt.store.deliveryItems.get(REPO, 1)).toMatchObject({
      state: 'owed',
      prNumber: 7,
      mergeSha: 'mergedsha',
      labelled: true,
    });
  });

  it('GH03 a merge GitHub refuses (the head moved) is reported on the PR once and not retried blindly', async () => {
    const h = await makeProbot();
    await seedAfkRun(h);
    await seedVerdict(h, 'r2', 'accept');
    const comments: string[] = [];
    const fresh = encodeMarker({ run: 'r2', sha: HEAD, verdict: 'accept' }, 'tests pass');
    const scope = mockListing(mockToken(github()))
      .get(CONFIG_RE)
      .reply(...yamlConfig(AUTOLAND_YML));
    mockRepoRead(scope, {
      pulls: [claimPull()],
      claims: { 7: { comments: [ghComment(2, BOT, fresh, 'Bot')] } },
      baseReads: 2,
    })
      .put('/repos/Codertocat/Hello-World/pulls/7/merge', { sha: HEAD, merge_method: 'squash' })
      .reply(409, { message: 'Head branch was modified. Review and try the merge again.' })
      .post('/repos/Codertocat/Hello-World/issues/7/comments', (b) => (comments.push(b.body), true))
      .reply(201, { id: 77 });
    mockCheckRuns(scope, [], { create: 1 });
    await h.rt.engine.schedulerTick();
    expect(comments).toHaveLength(1);
    expect(comments[0]).toContain('GitHub refused to merge #7 at abc1234: Head branch was modified.');
    expect(comments[0]).toContain('comment `/yoke land` on #7');

    // Next pass: same head, same accept: no second PUT, no second comment.
    const s2 = github(); // the app's installations stand in (SC10)
    mockRepoRead(s2, {
      probed: true,
      pulls: [claimPull()],
      claims: { 7: { comments: [ghComment(2, BOT, fresh, 'Bot')], files: 'cached' } },
    });
    await h.rt.engine.schedulerTick();
    expect((await h.rt.store.merges.get(REPO, 7, HEAD))?.state).toBe('refused');
  });
});

describe('a refused merge and the client retry policy', () => {
  it("GH03 with retries on, GitHub's 409 to a merge is an answer: one PUT, one notice, no retry", async () => {
    const h = await makeProbot({ retry: true });
    await seedAfkRun(h);
    await seedVerdict(h, 'r2', 'accept');
    const comments: string[] = [];
    const fresh = encodeMarker({ run: 'r2', sha: HEAD, verdict: 'accept' }, 'tests pass');
    const scope = mockListing(mockToken(github()))
      .get(CONFIG_RE)
      .reply(...yamlConfig('autoland:\n  enabled: true\ndashboard_issue: false\n'));
    mockRepoRead(scope, {
      pulls: [claimPull()],
      claims: { 7: { comments: [ghComment(2, BOT, fresh, 'Bot')] } },
      baseReads: 2,
    })
      .put('/repos/Codertocat/Hello-World/pulls/7/merge')
      .once()
      .reply(409, { message: 'Head branch was modified. Review and try the merge again.' })
      .post('/repos/Codertocat/Hello-World/issues/7/comments', (b) => (comments.push(b.body), true))
      .reply(201, { id: 78 });
    mockCheckRuns(scope, [], { create: 1 });
    await h.rt.engine.schedulerTick();
    // A retried PUT would find no mock and be listed as unmatched after the test.
    expect(comments).toHaveLength(1);
  });
});

describe('commands found by poll (Probot level)', () => {
  it('TR05 a busy repository loses no command: after the first read, every comment since the newest seen is read, page by page', async () => {
    const h = await makeProbot();
    const at = (ms: number) => new Date(h.clock.now() + ms).toISOString();
    const chatter = (from: number, n: number, ms: number) =>
      Array.from({ length: n }, (_, i) => ({
        ...ghComment(from + i, 'someone', `Comment ${from + i}`),
        created_at: at(ms),
        updated_at: at(ms),
      }));
    // First read: the newest 100, nothing but chatter.
    const first = mockListing(mockToken(github()))
      .get(CONFIG_RE)
      .reply(...yamlConfig('auto: false\ndashboard_issue: false\n'));
    mockRepoRead(first, { recent: chatter(1000, 100, 1000).reverse() });
    await h.rt.engine.schedulerTick();
    // Then 150 comments arrive; the command is on the second page.
    const since = at(1000);
    h.clock.advance(h.rt.settings.idleProbeMs); // the idle repository's probe is due
    const page1 = chatter(2000, 100, 5000);
    const page2 = [
      ...chatter(3000, 49, 6000),
      { ...ghComment(4242, 'Codertocat', '/yoke status'), created_at: at(7000), updated_at: at(7000) },
    ];
    const replies: string[] = [];
    const scope = mockListing(github());
    scope
      .get('/repos/Codertocat/Hello-World/issues')
      .query(PROBE_QUERY)
      .reply(200, [{ number: 7, updated_at: at(7000) }])
      .get('/repos/Codertocat/Hello-World')
      .reply(200, { default_branch: 'main', full_name: REPO })
      .get('/repos/Codertocat/Hello-World/issues')
      .query({ state: 'open', labels: 'yoke:afk', per_page: '100' })
      .reply(200, [])
      .get('/repos/Codertocat/Hello-World/pulls')
      .query({ state: 'open', per_page: '100' })
      .reply(200, [])
      .get('/repos/Codertocat/Hello-World/issues/comments')
      .query({ since, sort: 'updated', direction: 'asc', per_page: '100' })
      .reply(200, page1, {
        link: `<${'https://api.github.com'}/repositories/1/issues/comments?since=${encodeURIComponent(since)}&sort=updated&direction=asc&per_page=100&page=2>; rel="next"`,
      })
      .get('/repositories/1/issues/comments')
      .query(true)
      .reply(200, page2)
      .get('/repos/Codertocat/Hello-World/collaborators/Codertocat/permission')
      .reply(200, { permission: 'write', role_name: 'write' })
      .post('/repos/Codertocat/Hello-World/issues/comments/4242/reactions', { content: '+1' })
      .reply(201, {})
      .post('/repos/Codertocat/Hello-World/issues/7/comments', (b) => (replies.push(b.body), true))
      .reply(201, { id: 9100 });
    await h.rt.engine.schedulerTick();
    expect(replies).toHaveLength(1);
    expect(replies[0]!.startsWith('@Codertocat **yoke status for Codertocat/Hello-World**')).toBe(true);
    expect(await h.rt.store.commands.get(4242)).toMatchObject({ receivedVia: 'poll', state: 'done' });
  });
});

describe('finding a dispatched workflow run (Probot level)', () => {
  it("TR03 follows every page and matches the run-name exactly (r1 is not r10), and only runs yoke's app dispatched count", async () => {
    const h = await makeProbot();
    const title = (id: string) => `yoke afk_auto issue#5 (${id})`;
    const by = (login: string) => ({ login, id: 1, type: login.endsWith('[bot]') ? 'Bot' : 'User' });
    const run = (id: number, name: string, actor = BOT) => ({
      id,
      status: 'queued',
      conclusion: null,
      display_title: title(name),
      event: 'workflow_dispatch',
      repository: { id: 1296269 },
      actor: by(actor),
      triggering_actor: by(actor),
    });
    const page1 = Array.from({ length: 100 }, (_, i) => ({ ...run(5000 + i, `r1${i}`), status: 'in_progress' }));
    // A writer dispatched the workflow under the same name, later: it is never a candidate.
    const page2 = [run(7777, 'r1'), run(7778, 'r1', 'mallory')];
    mockToken(github())
      .get('/repos/Codertocat/Hello-World/actions/workflows/yoke-run.yml/runs')
      .query((q) => q.page === undefined)
      .reply(
        200,
        { total_count: 102, workflow_runs: page1 },
        {
          link: '<https://api.github.com/repositories/1296269/actions/workflows/yoke-run.yml/runs?page=2>; rel="next"',
        },
      )
      .get('/repositories/1296269/actions/workflows/yoke-run.yml/runs')
      .query({ page: '2' })
      .reply(200, { total_count: 102, workflow_runs: page2 });
    const repo = { owner: 'Codertocat', name: 'Hello-World', fullName: REPO, installationId: 1 };
    expect(await h.rt.forge.findWorkflowRun(repo, 'yoke-run.yml', 'r1', h.clock.now())).toEqual({
      kind: 'one',
      run: {
        id: 7777,
        status: 'queued',
        conclusion: null,
        repositoryId: 1296269,
        event: 'workflow_dispatch',
        actor: BOT,
        triggeringActor: BOT,
        htmlUrl: null,
        headSha: null,
        updatedAt: null,
      },
    });
    // Two of the app's own under one name bind neither.
    github()
      .get('/repos/Codertocat/Hello-World/actions/workflows/yoke-run.yml/runs')
      .query(true)
      .reply(200, { total_count: 2, workflow_runs: [run(8001, 'r2'), run(8002, 'r2')] });
    expect(await h.rt.forge.findWorkflowRun(repo, 'yoke-run.yml', 'r2', h.clock.now())).toEqual({
      kind: 'many',
      ids: [8001, 8002],
    });
  });
});

describe('the dashboard issue (Probot level)', () => {
  const EMPTY_BODY = [
    'yoke keeps this issue current for Codertocat/Hello-World: it rewrites this text when what it shows changes. Comment `/yoke status` for more, or close the issue and set `dashboard_issue: false` in `.github/yoke.yml` to stop it.',
    '',
    '### Auto loop',
    '**off** (`auto: false` in `.github/yoke.yml`). To start labelled work again: comment `/yoke auto on` here.',
    '',
    '**Failures:** 0 in a row; 3 pause new work.',
    '',
    '### Live runs',
    '_None._',
    '',
    '### Waiting, in the order the next pass takes it',
    '_Nothing is waiting: the last pass started everything it found._',
    '',
    '### Stuck PRs',
    '_None._',
    '',
    '### Delivery owed',
    '_None._',
    '',
    '### Spend',
    '$0.00 reported today (UTC).',
  ].join('\n');

  /** A pass over an opted-in repository with nothing to do, up to its lookup of the open yoke:control issues. */
  const firstPassFinding = (controlIssues: object[]): nock.Scope =>
    mockRepoRead(
      mockListing(mockToken(github()))
        .get(CONFIG_RE)
        .reply(...yamlConfig('auto: false\n')),
      {},
    )
      .get('/repos/Codertocat/Hello-World/issues')
      .query({ state: 'open', labels: 'yoke:control', sort: 'created', direction: 'asc', per_page: '100' })
      .reply(200, controlIssues);

  it('is created once with the yoke:control label when the repository opts in, and not written again while nothing changes', async () => {
    const h = await makeProbot();
    const created: Record<string, unknown>[] = [];
    firstPassFinding([])
      .post('/repos/Codertocat/Hello-World/issues', (b) => (created.push(b), true))
      .reply(201, { number: 77 });
    await h.rt.engine.schedulerTick();
    expect(created).toEqual([
      { title: 'yoke dashboard for Codertocat/Hello-World', body: EMPTY_BODY, labels: ['yoke:control'] },
    ]);
    // Next pass: the repository is unchanged, so is the body: nothing is read of it, nothing is written.
    const before = h.stats.requests;
    await h.rt.engine.schedulerTick();
    expect(h.stats.requests - before).toBe(0); // the app's installations and their listing stand in (SC10)
  });

  it('finds the repository’s open yoke:control issue and edits its body instead of opening another', async () => {
    const h = await makeProbot();
    const edits: Record<string, unknown>[] = [];
    firstPassFinding([
      { number: 42, title: 'yoke control', labels: [{ name: 'yoke:control' }], user: { login: 'Codertocat' } },
    ])
      .patch('/repos/Codertocat/Hello-World/issues/42', (b) => (edits.push(b), true))
      .reply(200, { number: 42 });
    await h.rt.engine.schedulerTick();
    expect(edits).toEqual([{ body: EMPTY_BODY }]);
  });
});

describe('opt-in and polling (Probot level)', () => {
  it('GH01 a repository without .github/yoke.yml is read for that file only, and never written to', async () => {
    const h = await makeProbot();
    mockListing(mockToken(github()))
      .get(CONFIG_RE)
      .reply(404, { message: 'Not Found' })
      .get(/^\/repos\/Codertocat\/\.github\/contents\/\.github(%2F|\/)yoke\.yml/)
      .reply(404, { message: 'Not Found' });
    const pass = await h.rt.engine.schedulerTick();
    expect(pass.candidates).toEqual([]);
    expect((await h.rt.store.repos.get(REPO))?.disabledReason).toBeNull();
  });

  it('GH01 an invalid opt-in file disables the repo with a readable reason, told once on the control issue', async () => {
    const h = await makeProbot();
    const comments: string[] = [];
    mockListing(mockToken(github()))
      .get(CONFIG_RE)
      .reply(...yamlConfig('autoland: yes-please\ncap: 9\n'))
      .get('/repos/Codertocat/Hello-World/issues')
      .query({ state: 'open', labels: 'yoke:control', per_page: '1' })
      .reply(
        200,
        [{ number: 42, title: 'yoke control', labels: [{ name: 'yoke:control' }], user: { login: 'Codertocat' } }],
        { etag: '"ctl"' },
      )
      .post('/repos/Codertocat/Hello-World/issues/42/comments', (b) => (comments.push(b.body), true))
      .reply(201, { id: 1 });
    await h.rt.engine.schedulerTick();
    const reason = (await h.rt.store.repos.get(REPO))?.disabledReason;
    expect(reason).toContain('autoland: Invalid input: expected object, received string');
    expect(reason).toContain(
      '.github/yoke.yml: "cap" is not a setting here (the settings are: afk_label, auto, prefix, budget_minutes, autoland, fix_forward, fix, launcher, budget, agent, validate, protected_paths, dashboard_issue, delivery)',
    );
    expect(comments).toEqual([
      `yoke has disabled ${REPO}: ${reason}\n\n**To recover:** Fix \`.github/yoke.yml\` on the default branch of ${REPO}; yoke re-reads it on its next pass.`,
    ]);

    // The next pass finds it still invalid: the control issue list answers 304 and no second comment is posted.
    github()
      .get('/repos/Codertocat/Hello-World/issues')
      .query({ state: 'open', labels: 'yoke:control', per_page: '1' })
      .matchHeader('if-none-match', '"ctl"')
      .reply(304);
    await h.rt.engine.schedulerTick();
    expect(comments).toHaveLength(1);
  });

  it('GH05 SC02 an unchanged idle repository costs nothing until its probe is due, then one probe; once settled, answered 304', async () => {
    const h = await makeProbot();
    // Just past the start of the repository's slot of the watched opt-in file's refresh: none falls in this test.
    const period = h.rt.settings.configRefreshMs * WATCHED_REFRESH_FACTOR;
    const phase = phaseOf(REPO, period);
    h.clock.t = Math.ceil((h.clock.t + phase) / period) * period - phase + 1_000;
    const scope = mockListing(mockToken(github()))
      .get(CONFIG_RE)
      .reply(...yamlConfig('auto: true\ndashboard_issue: false\n'));
    mockRepoRead(scope, {});
    await h.rt.engine.schedulerTick();
    // Idle (no run, claim, request or recent webhook): within the idle probe interval the last view stands in, and
    // the installation's listing and the app's installations too (SC10): no request at all.
    let before = { ...h.stats };
    await h.rt.engine.schedulerTick();
    expect(h.stats.requests - before.requests).toBe(0);
    // Its probe's slot comes round within a period: one probe, which lists nothing changed since the read.
    h.clock.advance(h.rt.settings.idleProbeMs);
    const listing304 = () =>
      github()
        .get('/app/installations')
        .query(true)
        .matchHeader('if-none-match', '"inst1"')
        .reply(304)
        .get('/installation/repositories')
        .query(true)
        .matchHeader('if-none-match', '"repos1"')
        .reply(304);
    listing304().get('/repos/Codertocat/Hello-World/issues').query(PROBE_QUERY).reply(200, [], { etag: '"probe1"' });
    before = { ...h.stats };
    expect((await h.rt.engine.schedulerTick()).candidates).toEqual([]);
    expect(h.stats.requests - before.requests).toBe(3);
    // The next period's probe asks the same, conditionally: two listing requests and one probe, all 304.
    h.clock.advance(h.rt.settings.idleProbeMs);
    listing304()
      .get('/repos/Codertocat/Hello-World/issues')
      .query(PROBE_QUERY)
      .matchHeader('if-none-match', '"probe1"')
      .reply(304);
    before = { ...h.stats };
    const pass = await h.rt.engine.schedulerTick();
    expect(pass.candidates).toEqual([]);
    expect(h.stats.requests - before.requests).toBe(3);
    expect(h.stats.notModified - before.notModified).toBe(3);
  });

  it('GH05 a secondary rate limit answer is honoured: the request waits for retry-after and is retried', async () => {
    const h = await makeProbot({ throttle: true });
    github()
      .get('/app/installations')
      .query(true)
      .reply(
        403,
        { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.' },
        { 'retry-after': '1' },
      )
      .get('/app/installations')
      .query(true)
      .reply(200, []);
    const pass = await h.rt.engine.schedulerTick();
    expect(pass.repos).toBe(0);
  });
});

describe('GitHub Enterprise Server', () => {
  it('GH05 runs against a GHE base URL: the installation token and every read go to that host', async () => {
    const h = await makeProbot({ baseUrl: 'https://ghe.example.test/api/v3' });
    nock('https://ghe.example.test')
      .get('/api/v3/app/installations')
      .query(true)
      .reply(200, [{ id: 1 }])
      .post('/api/v3/app/installations/1/access_tokens')
      .reply(201, { token: 'ghs_ghe', expires_at: new Date(Date.now() + 3600_000).toISOString() })
      .get('/api/v3/installation/repositories')
      .query(true)
      .reply(200, {
        total_count: 1,
        repositories: [
          { id: 1, name: 'Hello-World', full_name: REPO, owner: { login: 'Codertocat' }, archived: false },
        ],
      })
      .get(/^\/api\/v3\/repos\/Codertocat\/Hello-World\/contents\/\.github(%2F|\/)yoke\.yml/)
      .reply(404, {})
      .get(/^\/api\/v3\/repos\/Codertocat\/\.github\/contents\/\.github(%2F|\/)yoke\.yml/)
      .reply(404, {});
    const pass = await h.rt.engine.schedulerTick();
    expect([pass.repos, pass.authFailures]).toEqual([1, []]);
  });
});

describe("GitHub's merge queue events (Probot level)", () => {
  it('LD04 a published merge_group delivery (a group built, or destroyed) asks for a pass of its repository at once; a forged one is refused before any handler', async () => {
    const h = await makeProbot();
    const kicks = vi.spyOn(h.rt.engine, 'kick').mockResolvedValue(undefined as never);
    const built = publishedPayload('merge_group', 'checks_requested');
    expect(built.merge_group.head_ref).toMatch(/^refs\/heads\/gh-readonly-queue\/main\/pr-\d+-[0-9a-f]{40}$/);
    await h.probot.receive({ id: 'delivery-group-1', name: 'merge_group', payload: built } as never);
    expect(kicks).toHaveBeenCalledTimes(1);
    await h.probot.receive({
      id: 'delivery-group-2',
      name: 'merge_group',
      payload: { ...built, action: 'destroyed', reason: 'dequeued' },
    } as never);
    expect(kicks).toHaveBeenCalledTimes(2);
    await expect(
      h.probot.webhooks.verifyAndReceive({
        id: 'forged-group',
        name: 'merge_group',
        payload: JSON.stringify(built),
        signature: 'sha256=' + 'f'.repeat(64),
      } as never),
    ).rejects.toThrow();
    expect(kicks).toHaveBeenCalledTimes(2);
    kicks.mockRestore();
  });
});

describe('leadership of what a webhook asks for (Probot level)', () => {
  it("TR13 a follower reaps nothing when a workflow_run webhook asks: only the leader's pass reaps and launches; the leader's does", async () => {
    const h = await makeProbot();
    // Another yoke process leads the ticks, its lease live.
    await h.rt.store.leaders.claim('ticks', 'another-yoke', 60_000);
    await h.probot.receive({
      id: 'delivery-run-1',
      name: 'workflow_run',
      payload: publishedPayload('workflow_run', 'completed'),
    } as never);
    await new Promise((r) => setTimeout(r, 50));
    await h.settle();
    // No pass ran here: it would have asked GitHub for the installations, which nothing here answers.
    expect(h.rt.engine.lastPass).toBeNull();
    // Once that lease has lapsed this process leads, and the same ask reaps (and reads the fleet).
    h.clock.advance(61_000);
    github().get('/app/installations').query(true).reply(200, []);
    await h.probot.receive({
      id: 'delivery-run-2',
      name: 'workflow_run',
      payload: publishedPayload('workflow_run', 'completed'),
    } as never);
    await new Promise((r) => setTimeout(r, 50));
    await h.settle();
    expect(h.rt.engine.lastPass?.trigger).toBe('reaper');
  });
});

describe('review-driven fixes (Probot level)', () => {
  const REVIEW_YML = 'autoland:\n  enabled: true\n  merge_method: squash\ndashboard_issue: false\n';
  /** GitHub's published review comment, on claim #7 at its head, as `GET /pulls/7/comments` lists it. */
  const inlineComment = () => {
    const c = structuredClone(publishedPayload('pull_request_review_comment', 'created').comment);
    return { ...c, pull_request_review_id: 237895671, commit_id: HEAD, line: 1, body: 'Say "Hello, World".' };
  };
  /** The review as `GET /pulls/7/reviews` lists it. */
  const restReview = (login: string, type = 'User') => ({
    id: 237895671,
    user: { login, type },
    state: 'CHANGES_REQUESTED',
    body: 'Keep the old greeting too.',
    commit_id: HEAD,
    submitted_at: new Date().toISOString(),
  });
  /** GitHub's published `pull_request_review.submitted`, as a change request on claim #7. */
  async function receiveReview(h: ProbotHarness, login: string, id: string) {
    const payload = publishedPayload('pull_request_review', 'submitted');
    payload.review.state = 'changes_requested';
    payload.review.user.login = login;
    payload.pull_request.number = 7;
    await h.probot.receive({ id, name: 'pull_request_review', payload } as never);
    await new Promise((r) => setTimeout(r, 50));
    await h.settle();
  }

  it("TR33 a writer's change request, delivered by webhook, dispatches a fix at the PR's head carrying the review and its inline comment", async () => {
    const h = await makeProbot();
    await seedAfkRun(h);
    await seedVerdict(h, 'r-land-1', 'accept');
    const dispatched: Record<string, any>[] = [];
    const scope = mockListing(mockToken(github()))
      .get(CONFIG_RE)
      .reply(...yamlConfig(REVIEW_YML));
    mockRepoRead(scope, {
      pulls: [claimPull()],
      claims: { 7: { comments: [], reviews: [restReview('Codertocat')] } },
    })
      .get('/repos/Codertocat/Hello-World/collaborators/Codertocat/permission')
      .reply(200, { permission: 'write', role_name: 'write', user: { login: 'Codertocat' } })
      .get('/repos/Codertocat/Hello-World/pulls/7/comments')
      .query({ sort: 'created', direction: 'asc', per_page: '100' })
      .reply(200, [inlineComment()])
      .post(
        '/repos/Codertocat/Hello-World/actions/workflows/yoke-run.yml/dispatches',
        (b) => (dispatched.push(b), true),
      )
      .reply(204);
    mockCheckRuns(scope, [], { create: 1 });
    await receiveReview(h, 'Codertocat', 'delivery-review-1');
    expect(dispatched.map((d) => [d.inputs.kind, d.inputs.subject, d.inputs.head_sha])).toEqual([
      ['fix', 'pr#7', HEAD],
    ]);
    expect(JSON.parse(dispatched[0]!.inputs.rejection)).toEqual({
      rejection: null,
      asks: [
        {
          source: 'review',
          author: 'Codertocat',
          writtenOn: null,
          text: 'Keep the old greeting too.',
          comments: [
            { path: 'README.md', line: 1, diffHunk: '@@ -1 +1 @@\n-# Hello-World', body: 'Say "Hello, World".' },
          ],
        },
      ],
    });
    const fix = (await h.rt.store.runs.listLive()).find((r) => r.kind === 'fix')!;
    expect(fix.why).toBe('a review by @Codertocat');
  });

  it("TR33 a reader's change request starts nothing, gets no reply and holds nothing: GitHub is asked about the reviewer once, and the accepted head merges as it would without it", async () => {
    const h = await makeProbot();
    await seedAfkRun(h);
    await seedVerdict(h, 'r-land-1', 'accept');
    const scope = mockListing(mockToken(github()))
      .get(CONFIG_RE)
      .reply(...yamlConfig(REVIEW_YML));
    mockRepoRead(scope, {
      pulls: [claimPull()],
      claims: { 7: { comments: [], reviews: [restReview('rita')] } },
      baseReads: 2,
    })
      .get('/repos/Codertocat/Hello-World/collaborators/rita/permission')
      .reply(200, { permission: 'read', role_name: 'read', user: { login: 'rita' } })
      // As on GitHub, a reader's change request holds nothing: the accepted head merges.
      .put('/repos/Codertocat/Hello-World/pulls/7/merge', { sha: HEAD, merge_method: 'squash' })
      .reply(200, { merged: true, sha: 'mergedsha' })
      .post('/repos/Codertocat/Hello-World/issues/1/labels', { labels: ['yoke:delivery-owed'] })
      .reply(200, []);
    mockCheckRuns(scope, [], { create: 1 });
    await receiveReview(h, 'rita', 'delivery-review-2');
    // isolateNock fails the test on any request nothing above answers: no dispatch, no comment, no reaction.
    expect((await h.rt.store.runs.listLive()).map((r) => [r.kind, r.subject, r.why])).toEqual([]);
    expect((await h.rt.store.asks.listForRepo(REPO)).map((a) => [a.author, a.declined])).toEqual([
      ['rita', 'not_a_writer'],
    ]);
  });
});
