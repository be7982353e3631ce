import { afterEach, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/client.js';
import { runCli } from '../../src/cli/main.js';
import { DEFAULT_DRIVER_POLICY } from '../../src/cli/watch-deploy.js';
import { startApi } from '../helpers/api-server.js';
import { REPO, makeDeliveryHarness } from '../helpers/delivery.js';

// The delivery defects of a busy fleet, driven through the driver and the
// HTTP API: an answer lost after yoke acted (as `--drop-answers` loses them),
// and a verdict callback's gate check landing with the driver's own.

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

const CONFIG = {
  delivery: {
    stages: [
      { name: 'staging', kind: 'deploy', command: './deploy.sh staging' },
      { name: 'qa', kind: 'qa' },
      { name: 'production', kind: 'deploy', command: './deploy.sh production' },
    ],
  },
};
const PLANS = { '.github/yoke/qa/solo.yml': 'name: solo\ncases:\n  - {id: ok, title: It works, run: ./qa/ok.sh}\n' };

async function setup() {
  const h = await makeDeliveryHarness({ config: CONFIG, plans: PLANS });
  await h.attach(1, 'solo');
  const api = await startApi(h, { tokens: ['op-token'] });
  close = api.close;
  return { h, api };
}

function driverIo(url: string, f: typeof fetch) {
  const out: string[] = [];
  const err: string[] = [];
  const ran: string[] = [];
  const io: CliIo = {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    env: { YOKE_URL: url, YOKE_TOKEN: 'op-token' },
    fetch: f,
    exec: async (command) => {
      ran.push(command);
      return { code: 0, output: 'ok' };
    },
  };
  return { io, out, err, ran };
}

const verdict = (url: string, run: string) =>
  fetch(`${url}/yoke/api/deployment-runs/${run}/stages/qa/verdicts`, {
    method: 'POST',
    headers: { authorization: 'Bearer op-token', 'content-type': 'application/json' },
    body: JSON.stringify({ item: 'APP-1', case: 'ok', result: 'pass', evidence: 'ran ./qa/ok.sh: ok' }),
  });

describe('the driver through races and lost answers', () => {
  it("DX07 a lost answer to a deploy stage's end report: the driver's repeat is answered as the first was, and it goes on", async () => {
    const { h, api } = await setup();
    let dropped = 0;
    const lossy = (async (input: string | URL | Request, init?: RequestInit) => {
      const res = await fetch(input, init);
      if (
        init?.method === 'POST' &&
        String(input).endsWith('/stages/staging/deploy') &&
        String(init.body).includes('"phase":"end"') &&
        dropped === 0
      ) {
        dropped++;
        await res.text();
        throw new TypeError('fetch failed: the answer was lost');
      }
      return res;
    }) as typeof fetch;
    const d = driverIo(api.url, lossy);
    let holderDone = false;
    const code = await runCli(['watch', 'deploy', REPO, '--json', '--driver', 'ci-7'], {
      ...d.io,
      driverPolicy: DEFAULT_DRIVER_POLICY,
      sleep: async (ms) => {
        h.clock.advance(ms);
        const run = (await h.store.deploymentRuns.list())[0]!.id;
        if (!holderDone && (await h.store.deploymentRuns.stage(run, 'qa'))) {
          holderDone = true;
          await verdict(api.url, run);
        }
      },
    });
    expect([code, d.err]).toEqual([0, []]);
    expect(dropped).toBe(1);
    const run = (await h.store.deploymentRuns.list())[0]!.id;
    expect(
      (await h.store.deploymentRuns.stages(run))
        .filter((s) => s.stage !== 'qa')
        .map((s) => [s.stage, s.state, s.attempts])
        .sort(),
    ).toEqual([
      ['production', 'succeeded', 1],
      ['staging', 'succeeded', 1],
    ]);
    expect(d.ran).toEqual(['./deploy.sh staging', './deploy.sh production']);
  });

  it("DX12 a verdict callback's gate check landing with the driver's moves the run once: production is deployed, and only then does the run succeed", async () => {
    const { h, api } = await setup();
    let callback: Promise<Response> | null = null;
    // The holder's verdict goes out just as the driver sends its next gate check: two checks of one stage at once.
    const racing = (async (input: string | URL | Request, init?: RequestInit) => {
      if (
        init?.method === 'POST' &&
        String(input).endsWith('/stages/qa/dispatch') &&
        !callback &&
        (await h.store.deploymentRuns.stage((await h.store.deploymentRuns.list())[0]!.id, 'qa'))
      ) {
        const run = (await h.store.deploymentRuns.list())[0]!.id;
        const wake = (await h.store.qa.wakes(run)).length;
        if (wake > 0) callback = verdict(api.url, run);
      }
      return fetch(input, init);
    }) as typeof fetch;
    const d = driverIo(api.url, racing);
    const code = await runCli(['watch', 'deploy', REPO, '--json', '--driver', 'ci-7'], {
      ...d.io,
      driverPolicy: DEFAULT_DRIVER_POLICY,
      sleep: async (ms) => h.clock.advance(ms),
    });
    expect(callback).not.toBeNull();
    expect((await callback!).status).toBe(201);
    expect([code, d.err]).toEqual([0, []]);
    const run = (await h.store.deploymentRuns.list())[0]!.id;
    expect(d.ran).toEqual(['./deploy.sh staging', './deploy.sh production']);
    expect((await h.store.deploymentRuns.stages(run)).map((s) => [s.stage, s.state, s.attempts]).sort()).toEqual([
      ['production', 'succeeded', 1],
      ['qa', 'settled', 0],
      ['staging', 'succeeded', 1],
    ]);
    expect((await h.store.deploymentRuns.get(run))!.status).toBe('succeeded');
  });
});
