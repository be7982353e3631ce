import { afterEach, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/client.js';
import { runCli } from '../../src/cli/main.js';
import { DEFAULT_DRIVER_POLICY } from '../../src/cli/watch-deploy.js';
import { startApi } from '../helpers/api-server.js';
import { REPO, makeDeliveryHarness } from '../helpers/delivery.js';

// TR12, plan executions: a start whose answer is lost opens one execution,
// and one whose runner is gone (Ctrl-C) lapses with its lease, so the run
// is never held by it. Driven through the driver and the HTTP API.

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

const STAGES = {
  delivery: {
    stages: [
      { name: 'qa', kind: 'qa' },
      { name: 'production', kind: 'deploy', command: './deploy.sh production' },
    ],
  },
};

async function setup() {
  const h = await makeDeliveryHarness({ config: STAGES });
  await h.attach(2, 'smoke');
  await h.attach(3, 'smoke');
  const api = await startApi(h, { tokens: ['op-token'] });
  close = api.close;
  return { h, api };
}

/** The CLI's io: the driver's sleeps move the harness clock, as waiting would. */
function io(url: string, h: Awaited<ReturnType<typeof makeDeliveryHarness>>, over: Partial<CliIo> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const ran: string[] = [];
  const value = {
    out: (l: string) => out.push(l),
    err: (l: string) => err.push(l),
    env: { YOKE_URL: url, YOKE_TOKEN: 'op-token' },
    fetch,
    exec: async (command: string) => {
      ran.push(command);
      return { code: 0, output: 'ok' };
    },
    ...over,
  } as CliIo;
  return { io: value, out, err, ran, sleep: async (ms: number) => h.clock.advance(ms) };
}

describe('TR12 plan execution leases', () => {
  it('TR12 a lost answer to the start of a capture opens no second execution: the retry with the same key gets the first, and the driver ends it', async () => {
    const { h, api } = await setup();
    let drops = 1;
    const lossy = (async (input: string | URL | Request, init?: RequestInit) => {
      const res = await fetch(input, init);
      if (init?.method === 'POST' && String(input).endsWith('/executions') && drops > 0) {
        drops--;
        // yoke opened it and answered; the answer never arrives.
        await res.text();
        throw new TypeError('fetch failed: the answer was lost');
      }
      return res;
    }) as typeof fetch;
    const c = io(api.url, h, { fetch: lossy });
    const code = await runCli(['watch', 'deploy', REPO, '--json', '--driver', 'ci-7'], {
      ...c.io,
      driverPolicy: DEFAULT_DRIVER_POLICY,
      sleep: c.sleep,
    });
    expect([code, c.err]).toEqual([0, []]);
    expect(drops).toBe(0);
    const run = (await h.store.deploymentRuns.list())[0]!;
    expect(run.status).toBe('succeeded');
    expect((await h.store.executions.forRun(run.id)).map((e) => [e.subject, e.kind, e.state])).toEqual([
      [`${run.id}-g1`, 'deployment-stage', 'ended'],
    ]);
    expect(c.ran).toEqual(['./qa/health.sh', './qa/flaky.sh', './deploy.sh production']);
  });

  it("TR12 a Ctrl-C'd `yoke qa plan run --plan` leaves an execution that lapses with its lease: the driver then settles the stage and delivers", async () => {
    const { h, api } = await setup();
    const created = await fetch(`${api.url}/yoke/api/deployment-runs`, {
      method: 'POST',
      headers: { authorization: 'Bearer op-token', 'content-type': 'application/json' },
      body: JSON.stringify({ repo: REPO }),
    });
    const run = (await created.json()) as { id: string; commit: string };
    // The plan run starts its cases, and is killed in the middle: its execution is never ended.
    const killed = io(api.url, h, { head: () => run.commit, exec: () => new Promise(() => {}) });
    void runCli(['qa', 'plan', 'run', '--deployment-run-id', run.id, '--stage', 'qa', '--plan', 'smoke'], killed.io);
    while ((await h.store.executions.live(run.id, 'qa', h.clock.now())).length === 0)
      await new Promise((r) => setTimeout(r, 5));

    const c = io(api.url, h);
    const code = await runCli(['watch', 'deploy', '--json', '--driver', 'ci-7', '--', run.id], {
      ...c.io,
      driverPolicy: DEFAULT_DRIVER_POLICY,
      sleep: c.sleep,
    });
    expect([code, c.err]).toEqual([0, []]);
    const events = c.out.map((l) => JSON.parse(l) as { event: string; code?: string });
    // Busy while its lease lived (120 s), then not: after the busy retries at 15, 30, 60 and 60 s (165 s) it has lapsed.
    expect(events.filter((e) => e.event === 'retry').map((e) => e.code)).toEqual([
      'qa_plan_busy',
      'qa_plan_busy',
      'qa_plan_busy',
      'qa_plan_busy',
    ]);
    expect((await h.store.deploymentRuns.get(run.id))!.status).toBe('succeeded');
    expect((await h.store.closeouts.forRun(run.id)).map((x) => [x.issueNumber, x.state])).toEqual([
      [1, 'closed'],
      [2, 'closed'],
      [3, 'closed'],
    ]);
    expect((await h.store.executions.forRun(run.id)).map((e) => e.state)).toEqual(['live', 'ended']);
  });
});
