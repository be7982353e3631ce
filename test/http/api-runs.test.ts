import { afterEach, describe, expect, it } from 'vitest';
import { makeHarness, type Harness } from '../helpers/fleet.js';
import { WF, good, jwt, liveRun, post, startRunApi } from '../helpers/run-api.js';

// A run's own requests besides its report: a push token for its one branch,
// and the claim PR yoke opens for it. Only the live AFK or fix run itself,
// with its own credential, gets either; everyone else gets a refusal and
// yoke mints nothing and opens nothing.

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

async function start(h: Harness): Promise<string> {
  h.forge.addRepo('acme/api', {});
  const api = await startRunApi(h, ['operator-secret']);
  close = api.close;
  return api.url;
}

const answer = async (res: Response) => {
  const json = (await res.json()) as { error?: { code: string; message: string } } & Record<string, unknown>;
  return [res.status, json.error?.code ?? null];
};

describe('POST /yoke/api/runs/:id/push and /claim', () => {
  it('TR03 an AFK run with its own secret gets a push token for yoke/<issue>-<run> and its claim PR, opened as the app with the closing keyword and trailer', async () => {
    const h = makeHarness();
    const base = await start(h);
    const id = await liveRun(h);
    const push = await post(`${base}/yoke/api/runs/${id}/push`, {}, 'the-secret');
    expect(push.status).toBe(200);
    expect(await push.json()).toMatchObject({ token: 'ghs_push_1', branch: `yoke/1-${id}` });
    expect(h.forge.pushTokens).toEqual([{ repo: 'acme/api', token: 'ghs_push_1' }]);
    const claim = await post(
      `${base}/yoke/api/runs/${id}/claim`,
      { title: '  Add a   shout helper ', summary: 'claude-code finished.', base: 'trunk' },
      'the-secret',
    );
    expect(claim.status).toBe(201);
    expect(await claim.json()).toEqual({ number: 1001 });
    // A command run names its base; an Actions run's is the ref yoke dispatched it on.
    expect(h.forge.openedPulls).toEqual([
      {
        repo: 'acme/api',
        head: `yoke/1-${id}`,
        base: 'trunk',
        title: 'Add a shout helper',
        body: `Closes #1\n\nThe agent's summary, quoted as it wrote it:\n\n\`\`\`\nclaude-code finished.\n\`\`\`\n\nYoke-Run: ${id}`,
      },
    ]);
  });

  it("TR03 a fix run pushes to the claim PR's own branch, never to one of its choosing, and opens no PR", async () => {
    const h = makeHarness();
    const base = await start(h);
    h.forge.addPull('acme/api', { number: 7, headSha: 'abcdef1', headRef: 'yoke/1-rolder' });
    const id = await liveRun(h, { kind: 'fix' });
    const push = await post(`${base}/yoke/api/runs/${id}/push`, { branch: 'main' }, 'the-secret');
    expect(await push.json()).toMatchObject({ branch: 'yoke/1-rolder' });
    expect(
      await answer(await post(`${base}/yoke/api/runs/${id}/claim`, { title: 't', summary: 's' }, 'the-secret')),
    ).toEqual([409, 'run_cannot_push']);
    expect(h.forge.openedPulls).toEqual([]);
  });

  it('TR03 a fix of a PR from a fork, or of a closed PR, gets no push token', async () => {
    const h = makeHarness();
    const base = await start(h);
    h.forge.addPull('acme/api', { number: 7, headSha: 'abcdef1', headRepo: 'mallory/api' });
    const id = await liveRun(h, { kind: 'fix' });
    const res = await post(`${base}/yoke/api/runs/${id}/push`, {}, 'the-secret');
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe(
      `Run ${id} (fix) cannot push: PR #7 comes from a fork.`,
    );
    await h.store.runs.end(id, 'failure', 'refused', h.clock.now());
    const gone = await liveRun(h, { kind: 'fix' });
    h.forge.repos.get('acme/api')!.pulls = [];
    expect(await answer(await post(`${base}/yoke/api/runs/${gone}/push`, {}, 'the-secret'))).toEqual([
      409,
      'run_cannot_push',
    ]);
    expect(h.forge.pushTokens).toEqual([]);
  });

  it("TR03 nobody else gets a push token or a claim PR: another run's secret, no credential, a lander, an ended or reported run, another workflow run's OIDC token", async () => {
    const h = makeHarness();
    const base = await start(h);
    const mine = await liveRun(h);
    const theirs = await liveRun(h, { secret: 'their-secret', issue: 2 });
    const lander = await liveRun(h, { kind: 'lander' });
    const ended = await liveRun(h, { issue: 3 });
    await h.store.runs.end(ended, 'failure', 'timed out', h.clock.now());
    const reported = await liveRun(h, { issue: 4 });
    expect(
      (await post(`${base}/yoke/api/runs/${reported}/result`, { outcome: 'failure', summary: 'gave up' }, 'the-secret'))
        .status,
    ).toBe(200);
    const actions = await liveRun(h, { secret: null, ref: 'yoke-run.yml@main#4242', issue: 5 });
    h.forge.workflowRuns.set(actions, WF);
    const now = Math.floor(h.clock.now() / 1000);
    const cases: [string, string | undefined, number, string][] = [
      [mine, 'their-secret', 401, 'run_secret_invalid'],
      [mine, undefined, 401, 'run_secret_invalid'],
      [mine, 'operator-secret', 401, 'run_secret_invalid'],
      [theirs, 'the-secret', 401, 'run_secret_invalid'],
      ['nope', 'the-secret', 404, 'run_unknown'],
      [lander, 'the-secret', 409, 'run_cannot_push'],
      [ended, 'the-secret', 409, 'run_not_live'],
      [reported, 'the-secret', 409, 'run_already_reported'],
      [actions, jwt({ ...good(now), run_id: '5000' }), 401, 'run_token_invalid'],
      [actions, 'the-secret', 401, 'run_token_invalid'],
    ];
    for (const route of ['push', 'claim']) {
      for (const [id, token, status, code] of cases) {
        expect(
          await answer(await post(`${base}/yoke/api/runs/${id}/${route}`, { title: 't', summary: 's' }, token)),
          `${route} ${id} ${token}`,
        ).toEqual([status, code]);
      }
    }
    expect(h.forge.pushTokens).toEqual([]);
    expect(h.forge.openedPulls).toEqual([]);
    // The dispatched workflow run's own token is the one that works.
    expect((await post(`${base}/yoke/api/runs/${actions}/push`, {}, jwt(good(now)))).status).toBe(200);
  });

  it('refuses a claim body it cannot read, naming the field', async () => {
    const h = makeHarness();
    const base = await start(h);
    const id = await liveRun(h);
    const res = await post(`${base}/yoke/api/runs/${id}/claim`, { title: 7, summary: 's', extra: true }, 'the-secret');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain(
      'title: Invalid input: expected string, received number',
    );
    expect(h.forge.openedPulls).toEqual([]);
  });
});
