import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { DEFAULT_DRIVER_POLICY } from '../../src/cli/watch-deploy.js';
import { startApi } from '../helpers/api-server.js';
import { createDeploymentRun } from '../../src/delivery/runs/deployment-runs.js';
import { checkIn } from '../../src/delivery/runs/executions.js';
import { REPO, makeDeliveryHarness, mergedHead, recordAs } from '../helpers/delivery.js';

// The driver against a real yoke API over loopback HTTP, with faults injected
// into the transport: answers dropped after the server acted, and duplicate
// concurrent dispatches. Exactly one effect per logical dispatch.

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

const STAGES = {
  delivery: {
    stages: [
      { name: 'staging', kind: 'deploy', command: './deploy.sh staging' },
      { name: 'qa', kind: 'qa' },
      { name: 'production', kind: 'deploy', command: './deploy.sh production' },
    ],
  },
};

async function setup() {
  const h = await makeDeliveryHarness({ config: STAGES });
  await h.attach(1, 'checkout');
  await h.attach(2, 'smoke');
  await h.attach(3, 'smoke');
  const api = await startApi(h, { tokens: ['op-token'] });
  close = api.close;
  return { h, api };
}

/** A fetch that lets the server act on the first `drop` dispatches, then loses their answers; and sends each dispatch twice at once. */
function faultyFetch(drop: number) {
  const seen: string[] = [];
  const f = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input);
    if (init?.method === 'POST' && url.endsWith('/dispatch')) {
      const key = (init.headers as Record<string, string>)['idempotency-key']!;
      seen.push(key);
      // A duplicate sent alongside: the server answers one of them in flight, and acts once.
      const [a, b] = await Promise.all([
        fetch(input, { ...init, signal: undefined }),
        fetch(input, { ...init, signal: undefined }),
      ]);
      const answers = [a, b];
      const real = answers.find((r) => r.status !== 409) ?? a;
      if (drop > 0) {
        drop--;
        await real.text();
        throw new TypeError('fetch failed: the answer was lost');
      }
      return real;
    }
    return fetch(input, init);
  }) as typeof fetch;
  return { fetch: f, seen };
}

describe('yoke watch deploy over HTTP', () => {
  it('DX07/DX08/DX11 drives a run to its end through lost answers and duplicate dispatches, with exactly one effect each', async () => {
    const { h, api } = await setup();
    const faults = faultyFetch(2);
    let holderDone = false;
    const out: string[] = [];
    const err: string[] = [];
    const ran: string[] = [];
    const code = await runCli(['watch', 'deploy', REPO, '--json', '--driver', 'ci-7'], {
      out: (l) => out.push(l),
      err: (l) => err.push(l),
      env: { YOKE_URL: api.url, YOKE_TOKEN: 'op-token', YOKE_LOGIN: 'maint' },
      fetch: faults.fetch,
      exec: async (command) => {
        ran.push(command);
        return { code: 0, output: 'ok' };
      },
      driverPolicy: { ...DEFAULT_DRIVER_POLICY, gatePollMs: 15_000 },
      // While the driver waits between gate checks, APP-1's holder does its QA and a reviewer approves.
      sleep: async (ms) => {
        if (ms !== 15_000 || holderDone) return;
        holderDone = true;
        const run = (await h.store.deploymentRuns.list())[0]!.id;
        for (const [c, evidence] of [
          ['cart', 'ok'],
          ['looks-right', 'screenshot'],
        ] as const) {
          // TR11: the manual case is a writer's approval, recorded with alice's own token.
          const ok = await recordAs(h.fleet, run, 'qa', {
            item: 'APP-1',
            case: c,
            result: 'pass',
            evidence,
            source: 'yoke qa case run',
            by: c === 'looks-right' ? 'alice' : 'agent',
          });
          expect(ok.ok).toBe(true);
        }
        h.forge
          .repo(REPO)
          .merged.find((p) => p.number === 101)!
          .reviews.push({ author: 'bob', state: 'APPROVED', commitId: mergedHead(1) });
        h.forge.repo(REPO).permissions.bob = 'write';
      },
    });
    expect([code, err]).toEqual([0, []]);
    const events = out.map((l) => JSON.parse(l) as { event: string; [k: string]: unknown });
    const run = String(events[0]!.run);
    expect(events.filter((e) => e.event === 'recover').length).toBeGreaterThanOrEqual(2);
    expect(events.at(-1)).toEqual({ event: 'done', run, status: 'succeeded' });
    expect(ran).toEqual(['./deploy.sh staging', './qa/health.sh', './qa/flaky.sh', './deploy.sh production']);

    // One effect per logical dispatch: each stage once, each member closed once, each notice once.
    const order = ['staging', 'qa', 'production'];
    expect(
      (await h.store.deploymentRuns.stages(run))
        .sort((a, b) => order.indexOf(a.stage) - order.indexOf(b.stage))
        .map((s) => [s.stage, s.state, s.attempts]),
    ).toEqual([
      ['staging', 'succeeded', 1],
      ['qa', 'settled', 0],
      ['production', 'succeeded', 1],
    ]);
    expect((await h.store.closeouts.forRun(run)).map((c) => [c.issueNumber, c.state, c.attempts])).toEqual([
      [1, 'closed', 1],
      [2, 'closed', 1],
      [3, 'closed', 1],
    ]);
    expect(
      [101, 102, 103].map(
        (pr) => h.forge.comments.filter((c) => c.number === pr && c.body.includes('is delivered')).length,
      ),
    ).toEqual([1, 1, 1]);
    const notices = await h.store.notices.forRun(run);
    expect(new Set(notices.map((n) => `${n.subject}/${n.waitKey}/${n.recipient}`)).size).toBe(notices.length);

    // Every gate check's id was its own, and every recorded answer replays identically.
    const requests = [...new Set(faults.seen)];
    expect(requests.length).toBeGreaterThanOrEqual(2);
    for (const id of requests) {
      const recorded = (await h.store.dispatchRequests.get(id))!;
      expect(recorded.state).toBe('completed');
      const replay = await fetch(`${api.url}/yoke/api/deployment-runs/${run}/requests/${id}`, {
        headers: { authorization: 'Bearer op-token' },
      });
      expect(await replay.text()).toBe(recorded.response);
    }
  });

  it('DX15 --fresh never recovers a run; a refusal exits 1 and says what recovers it', async () => {
    const { api } = await setup();
    const err: string[] = [];
    const io = {
      out: () => {},
      err: (l: string) => err.push(l),
      env: { YOKE_URL: api.url, YOKE_TOKEN: 'op-token' },
      fetch,
    };
    expect(await runCli(['watch', 'deploy', '--fresh', '--', 'dr-123'], io)).toBe(2);
    expect(err).toEqual([
      '--fresh does not recover run dr-123: a fresh start would lose track of what it did.\nTo recover: Read `yoke deployment-runs get dr-123` and resume it with `yoke watch deploy -- dr-123`.',
    ]);
    expect(await runCli(['watch', 'deploy', '--', 'dr-404'], io)).toBe(1);
    expect(err.at(-1)).toBe(
      'There is no deployment run dr-404.\nTo recover: Name a run yoke created (its tracking issue and `yoke deployment-runs create` print its id).',
    );
  });

  it('DX09 a run driven over HTTPS is never taken over through the database door; told to, the driver refuses and says why', async () => {
    const { h, api } = await setup();
    const run = await createDeploymentRun(h.fleet, { repo: REPO });
    if (!run.ok) throw new Error(run.refusal.message);
    await checkIn(h.fleet, run.value.id, { driver: 'ci-7', lease_seconds: 1 });
    h.clock.advance(5_000);
    const err: string[] = [];
    let opened = 0;
    const door = async () => {
      opened++;
      return { url: api.url, token: 'op-token', hidden: [], close: async () => {} };
    };
    const io = {
      out: () => {},
      err: (l: string) => err.push(l),
      env: {},
      fetch,
      exec: async () => ({ code: 0, output: '' }),
    };
    expect(
      await runCli(['watch', 'deploy', '--db', '/tmp/yoke.db', '--', run.value.id], {
        ...io,
        openDoor: door,
        sleep: async () => {},
      }),
    ).toBe(1);
    expect(opened).toBe(1);
    expect(err).toEqual([
      `Run ${run.value.id} is driven over HTTPS; the database door does not take it over, so an HTTPS timeout is never recovered through it.\nTo recover: Resume it over HTTPS: \`yoke watch deploy -- ${run.value.id}\` with YOKE_URL set; read \`yoke deployment-runs get ${run.value.id}\` first.`,
    ]);
    expect((await h.store.deploymentRuns.get(run.value.id))!.driverTransport).toBe('https');
  });

  it("the database door without the app's credentials says what to set, and exits 1", async () => {
    const err: string[] = [];
    const code = await runCli(['watch', 'deploy', '--db', '/tmp/yoke-door-test.db', '--', 'dr-1'], {
      out: () => {},
      err: (l) => err.push(l),
      env: {},
      fetch,
    });
    expect([code, err]).toEqual([
      1,
      [
        "The database door did not open: The database door needs the app's credentials: set APP_ID, and PRIVATE_KEY_PATH to the app's .pem file, as the server has them.",
      ],
    ]);
  });
});
