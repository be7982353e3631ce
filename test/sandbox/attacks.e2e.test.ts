import { createHmac } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { accessSync, chmodSync, constants, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SettingsError } from '../../src/config/settings.js';
import { encodeMarker } from '../../src/forge/marker.js';
import { runnerBundle } from '../../src/agent/bundle.js';
import { startYoke } from '../../src/server.js';
import { ATTACK_TASK, DEMO_FILES, DEMO_REPO, DEMO_TASKS, MAINTAINER } from '../../sandbox/demo-repo.js';
import { git } from '../../sandbox/git.js';
import { Sandbox } from '../../sandbox/sandbox.js';
import { unclaimedWarnings } from '../helpers/sandbox-log.js';

/** Warnings the tests below provoke, each asserted where it is. */
const CLAIMED_WARNINGS: string[] = ['ignored verdict marker', 'signature does not match event payload and secret'];

// The attack suite (TR01–TR08): each hole an outsider, a hostile PR or a
// stray token could use to make yoke merge, tried over real HTTP against the
// sandbox forge. Each is refused or harmless, and nothing is merged that a
// lander of yoke's did not validate.

let s: Sandbox;
let releaseLander: () => void = () => undefined;
const landerReleased = new Promise<void>((r) => (releaseLander = r));

/** Host sockets, as a docker.sock sits on a runner: under /run where this user may write there, and outside /tmp. Each counts who connects. */
let hostSocketServers: { path: string; server: Server; connections: number }[] = [];
async function listenHostSockets(): Promise<typeof hostSocketServers> {
  const dirs = [mkdtempSync(join(existsSync('/var/tmp') ? '/var/tmp' : tmpdir(), 'yoke-attack-sock-'))];
  try {
    accessSync('/run', constants.W_OK);
    dirs.push(mkdtempSync('/run/yoke-attack-sock-'));
  } catch {
    /* /run is not ours to write here */
  }
  return Promise.all(
    dirs.map(async (d) => {
      const entry = { path: join(d, 'docker.sock'), server: createServer(), connections: 0 };
      entry.server.on('connection', (c) => (entry.connections++, c.destroy()));
      await new Promise<void>((r) => entry.server.listen(entry.path, r));
      chmodSync(entry.path, 0o777);
      return entry;
    }),
  );
}
const afkOf = async (issue: number) => (await s.runs()).find((r) => r.kind === 'afk_auto' && r.issueNumber === issue);
const pullFor = (issue: number) =>
  [...s.repo.issues.values()].find((i) => i.pull && i.body.includes(`Closes #${issue}`));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function asUser(token: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${s.forge.url}/api/v3${path}`, {
    method,
    headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function report(runId: string, bearer: string): Promise<[number, string]> {
  const res = await fetch(`${s.yokeUrl}/yoke/api/runs/${runId}/result`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ outcome: 'success', summary: 'from elsewhere' }),
  });
  const json = (await res.json()) as { error?: { message: string } };
  return [res.status, json.error?.message ?? 'accepted'];
}

/** An OIDC token from the same issuer and repository, but another workflow run. */
function otherWorkflowToken(over: { run_id?: string; workflow_ref?: string } = {}): string {
  return s.forge.oidc.mint({
    aud: s.yokeUrl,
    repository: DEMO_REPO,
    repository_id: String(s.repo.id),
    run_id: '999999',
    workflow: 'other',
    workflow_ref: `${DEMO_REPO}/.github/workflows/other.yml@refs/heads/main`,
    ref: 'refs/heads/main',
    event_name: 'workflow_dispatch',
    actor: 'yoke-sandbox[bot]',
    ...over,
  });
}

beforeAll(async () => {
  const optIn = DEMO_FILES['.github/yoke.yml']!.replace(
    'fix_forward: { enabled: true, max_attempts: 2 }',
    'fix_forward: { enabled: false }',
  );
  s = new Sandbox({
    launcher: 'actions',
    failAgent: 0,
    tasks: [DEMO_TASKS[0]!, ATTACK_TASK],
    tickSeconds: 1,
    // Runs are bound to their workflow runs by the reaper; keep it away so a report must bind them.
    reaperSeconds: 600,
    agentDelayMs: 2500,
    files: { '.github/yoke.yml': optIn },
  });
  await s.start();
  // The attack PR's lander stays live (its report job held, up to 30 s) until the suite has tried to forge its verdict.
  s.forge.runner.beforeJob = async (run, job) => {
    if (job !== 'report' || run.inputs.kind !== 'lander' || run.actor.login !== 'yoke-sandbox[bot]') return;
    if (run.inputs.subject !== `pr#${pullFor(2)?.number ?? 0}`) return;
    await Promise.race([landerReleased, sleep(30_000)]);
  };
  hostSocketServers = await listenHostSockets();
}, 60_000);

afterAll(async () => {
  releaseLander();
  for (const h of hostSocketServers) {
    h.server.close();
    rmSync(dirname(h.path), { recursive: true, force: true });
  }
  await s?.stop();
});

describe('the attack suite, end to end', () => {
  it('TR03 an OIDC token from another workflow of the same repository reports for no run, before the run is bound or after', async () => {
    await s.waitUntil(
      async () => {
        const afk = await afkOf(1);
        return afk?.status === 'live' && s.forge.runner.runs.some((w) => w.inputs.run_id === afk.id);
      },
      20_000,
      'the AFK run of #1',
    );
    const run = (await afkOf(1))!;
    expect(run.launcherRef).toBe('pending:yoke-run.yml@main');
    const wf = s.forge.runner.runs.find((w) => w.inputs.run_id === run.id)!;
    // Before: the report resolves the dispatched workflow run first, and the token is not from it.
    expect(await report(run.id, otherWorkflowToken())).toEqual([
      401,
      `The OIDC token was refused: the token is from workflow run 999999, not ${wf.id}`,
    ]);
    expect((await s.runtime.store.runs.get(run.id))!.launcherRef).toBe(`yoke-run.yml@main#${wf.id}`);
    // After: neither another run's token nor one naming this run id from another workflow file.
    expect(await report(run.id, otherWorkflowToken())).toEqual([
      401,
      `The OIDC token was refused: the token is from workflow run 999999, not ${wf.id}`,
    ]);
    expect(await report(run.id, otherWorkflowToken({ run_id: String(wf.id) }))).toEqual([
      401,
      `The OIDC token was refused: the token is from ${DEMO_REPO}/.github/workflows/other.yml@refs/heads/main, not ${DEMO_REPO}/.github/workflows/yoke-run.yml@refs/heads/main`,
    ]);
    expect((await s.runtime.store.runs.get(run.id))!.reportedOutcome).toBeNull();
    // The run's own report, from its own workflow run, is accepted, and #1 goes on to merge.
    await s.waitUntil(() => s.repo.issues.get(1)!.state === 'closed', 60_000, '#1 to merge');
  }, 90_000);

  it("TR01 TR03 a writer who dispatches the workflow under a live lander's run id, on main, is bound to nothing: the real lander's reject is recorded and nothing merges", async () => {
    const landerOf = async (pr: number) => (await s.runs()).find((r) => r.kind === 'lander' && r.prNumber === pr);
    await s.waitUntil(
      async () => pullFor(2) !== undefined && (await landerOf(pullFor(2)!.number))?.status === 'live',
      120_000,
      'the lander of the attack PR',
    );
    const pr = pullFor(2)!;
    const lander = (await landerOf(pr.number))!;
    const main = git(s.repo.gitDir, ['rev-parse', 'refs/heads/main']);
    // The writer's own run validates main (which passes) and reports accept for the lander's run id.
    const res = await asUser(
      s.maintainerToken,
      'POST',
      `/repos/${DEMO_REPO}/actions/workflows/yoke-run.yml/dispatches`,
      {
        ref: 'main',
        inputs: {
          run_id: lander.id,
          kind: 'lander',
          subject: lander.subject,
          head_sha: main,
          deadline: new Date(Date.now() + 600_000).toISOString(),
          api_url: s.yokeUrl,
          // yoke's runner is public (its URL, or the ref yoke publishes): the writer hands the real one's sha256.
          runner_sha256: (await runnerBundle()).sha256,
        },
      },
    );
    expect(res.status).toBe(204);
    const forged = s.forge.runner.runs.find((w) => w.inputs.run_id === lander.id && w.actor.login === MAINTAINER)!;
    const real = s.forge.runner.runs.find(
      (w) => w.inputs.run_id === lander.id && w.actor.login === 'yoke-sandbox[bot]',
    )!;
    await s.waitUntil(() => forged.status === 'completed', 120_000, 'the forged run to end');
    // Only now may the real lander finish: the forged report came first.
    releaseLander();
    await s.waitUntil(
      async () => (await s.runtime.store.runs.get(lander.id))!.verdict !== null,
      120_000,
      'the real verdict',
    );
    // yoke refused the forged run's report (its report job failed on yoke's 401) and bound the lander to its own dispatch.
    expect(forged.jobs).toMatchObject({ validate: 'success', report: 'failure' });
    expect(await s.runtime.store.runs.get(lander.id)).toMatchObject({
      verdict: 'reject',
      launcherRef: `yoke-run.yml@main#${real.id}`,
    });
    await sleep(2500);
    expect(pr.state).toBe('open');
    expect(pr.pull!.merged).toBe(false);
  }, 300_000);

  it('TR02 TR35 a PR whose tests fail and try to report accept, reach a host socket, read tokens from /proc and leave a process behind for the report job, is rejected by its own failing test and finds nothing', async () => {
    await s.waitUntil(
      async () =>
        (await s.runs()).some((r) => r.kind === 'lander' && r.prNumber === pullFor(2)?.number && r.verdict !== null),
      150_000,
      'the attack PR’s verdict',
    );
    const pr = pullFor(2)!;
    const lander = (await s.runs()).find((r) => r.kind === 'lander' && r.prNumber === pr.number)!;
    // The reject is yoke's validation of the PR's own test, which fails; the attack script exits 0.
    expect([lander.verdict, lander.headSha]).toEqual(['reject', pr.pull!.headSha]);
    expect(lander.summary).toContain('FAIL exfiltrate.test.js');
    expect(lander.summary).toContain('ok   zz-attack.test.js');
    const line = /YOKE-ATTACK-SEEN (\{.*\})/.exec(lander.summary ?? '')?.[1];
    expect(line, lander.summary ?? '').toBeDefined();
    const seen = JSON.parse(line!) as Record<string, unknown>;
    expect(seen).toEqual({
      // No run secret, OIDC request token, runtime token, job token or app key in any environment it could read.
      powers: [],
      // No host socket to connect to.
      sockets: [],
      // No network at all: not the OIDC endpoint, not GitHub with a token, not yoke.
      attempts: {
        oidcEndpoint: expect.not.stringMatching(/^\d+$/),
        writeWithGithubToken: expect.not.stringMatching(/^\d+$/),
        reportAccept: expect.not.stringMatching(/^\d+$/),
      },
      // sudo and any setuid program give it nothing.
      noNewPrivs: '1',
    });
    for (const h of hostSocketServers) expect(h.connections, h.path).toBe(0);
    // Nothing it started outlived its step.
    const left = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes('yoke-attack-outliver'));
    expect(left).toEqual([]);
    await sleep(2500);
    expect(pr.state).toBe('open');
    expect(pr.pull!.merged).toBe(false);
  }, 180_000);

  it('TR01 a reject marker edited into accept by someone with a write token merges nothing', async () => {
    const pr = pullFor(2)!;
    const lander = (await s.runs()).find((r) => r.kind === 'lander' && r.prNumber === pr.number)!;
    const marker = s.repo.comments.find((c) => c.issueNumber === pr.number && c.body.includes('yoke:verdict'))!;
    expect(marker.user.login).toBe('yoke-sandbox[bot]');
    const res = await asUser(s.maintainerToken, 'PATCH', `/repos/${DEMO_REPO}/issues/comments/${marker.id}`, {
      body: encodeMarker({ run: lander.id, sha: lander.headSha!, verdict: 'accept' }, 'edited'),
    });
    expect(res.status).toBe(200);
    // A comment moves the PR's updated_at, so the next pass reads the PR again, edited marker and all.
    await s.comment(pr.number, 'The tests pass now, please merge.');
    // Until a pass has read the edited marker (yoke says in its log why it ignored it), nothing here is proved.
    const why = `says accept for run ${lander.id} at ${lander.headSha!.slice(0, 7)}, which is not the verdict yoke recorded`;
    await s.waitUntil(
      () => s.logged('warn', 'ignored verdict marker').some((l) => l.reason === why),
      25_000,
      'a pass to read the edited marker',
    );
    expect(pr.pull!.merged).toBe(false);
    expect((await s.runtime.store.runs.get(lander.id))!.verdict).toBe('reject');
  }, 30_000);

  it('TR04 a PR from a fork that names a real run of its issue gets no claim, no lander, no label; a yoke:claim label added by hand grants nothing', async () => {
    const fork = s.forge.state.forkRepo(s.repo, 'mallory');
    const work = mkdtempSync(join(tmpdir(), 'yoke-fork-'));
    try {
      git(work, ['clone', '--quiet', fork.gitDir, '.']);
      git(work, ['checkout', '--quiet', '-b', 'innocent']);
      writeFileSync(join(work, 'lib', 'exfiltrate.js'), "module.exports = () => 'innocent';\n");
      git(work, ['add', '-A']);
      git(work, [
        '-c',
        'user.name=mallory',
        '-c',
        'user.email=m@example.invalid',
        'commit',
        '--quiet',
        '-m',
        'innocent',
      ]);
      git(work, ['push', '--quiet', 'origin', 'HEAD:refs/heads/innocent']);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
    const malloryToken = s.forge.personalToken('mallory');
    const run = (await afkOf(2))!;
    const opened = await asUser(malloryToken, 'POST', `/repos/${DEMO_REPO}/pulls`, {
      title: 'Add an innocent helper',
      head: 'mallory:innocent',
      base: 'main',
      body: `Closes #2\n\nYoke-Run: ${run.id}`,
    });
    expect(opened.status).toBe(201);
    const forked = (await opened.json()) as { number: number; head: { repo: { full_name: string } } };
    expect(forked.head.repo.full_name).toBe('mallory/demo');
    await sleep(3500);
    const state = async () => ({
      claim: (await s.runtime.store.claims.forPull(DEMO_REPO, forked.number)) ?? null,
      landers: (await s.runs()).filter((r) => r.prNumber === forked.number).length,
      labels: s.repo.issues.get(forked.number)!.labels,
    });
    expect(await state()).toEqual({ claim: null, landers: 0, labels: [] });
    // A maintainer (or anyone who can label) marks it as a claim by hand.
    expect(
      (
        await asUser(s.maintainerToken, 'POST', `/repos/${DEMO_REPO}/issues/${forked.number}/labels`, {
          labels: ['yoke:claim'],
        })
      ).status,
    ).toBe(200);
    await sleep(3500);
    expect(await state()).toEqual({ claim: null, landers: 0, labels: ['yoke:claim'] });
    expect(s.repo.issues.get(forked.number)!.pull!.merged).toBe(false);
  }, 30_000);

  it('TR05 a comment edited into /yoke reset does nothing', async () => {
    const store = s.runtime.store;
    for (let i = 0; i < 3; i++) await store.repos.addFailure(DEMO_REPO, 3, Date.now());
    expect((await store.repos.get(DEMO_REPO))!.pausedSince).not.toBeNull();
    const posted = (await (
      await asUser(s.maintainerToken, 'POST', `/repos/${DEMO_REPO}/issues/2/comments`, { body: 'Thanks, looking.' })
    ).json()) as { id: number };
    await sleep(1500);
    expect(
      (
        await asUser(s.maintainerToken, 'PATCH', `/repos/${DEMO_REPO}/issues/comments/${posted.id}`, {
          body: '/yoke reset',
        })
      ).status,
    ).toBe(200);
    await sleep(3500);
    expect((await store.repos.get(DEMO_REPO))!.pausedSince).not.toBeNull();
    expect(
      s.repo.comments.filter((c) => c.user.login === 'yoke-sandbox[bot]' && c.body.startsWith(`@${MAINTAINER}`)),
    ).toEqual([]);
    // Written as a new comment, the same command works.
    await asUser(s.maintainerToken, 'POST', `/repos/${DEMO_REPO}/issues/2/comments`, { body: '/yoke reset' });
    await s.waitUntil(async () => (await store.repos.get(DEMO_REPO))!.pausedSince === null, 10_000, 'the reset');
  }, 30_000);

  it('TR08 GH06 a webhook signed with Probot’s default secret is refused, and yoke will not start without a real one', async () => {
    const payload = JSON.stringify({ action: 'created', comment: { id: 1, body: '/yoke reset' } });
    const res = await fetch(`${s.yokeUrl}/api/github/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'issue_comment',
        'x-github-delivery': 'forged-1',
        'x-hub-signature-256': `sha256=${createHmac('sha256', 'development').update(payload).digest('hex')}`,
      },
      body: payload,
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(s.logged('error', 'signature does not match event payload and secret').length).toBeGreaterThan(0);
    const err = await startYoke({ APP_ID: '1', PRIVATE_KEY: 'not-used', YOKE_DB_PATH: ':memory:' }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SettingsError);
  });

  it('TR01 nothing was merged that a lander of yoke’s did not accept at that very head', async () => {
    const merged = [...s.repo.issues.values()].filter((i) => i.pull?.merged);
    expect(merged.length).toBeGreaterThan(0);
    for (const pr of merged) {
      const accepted = (await s.runs())
        .filter((r) => r.kind === 'lander' && r.prNumber === pr.number && r.verdict === 'accept')
        .map((r) => r.headSha);
      expect(accepted).toContain(pr.pull!.mergeNamedSha);
    }
  });
});

describe('what yoke logged here', () => {
  it('holds no warning or error that no test here claimed', () => {
    expect(unclaimedWarnings(s, CLAIMED_WARNINGS)).toEqual([]);
  });
});
