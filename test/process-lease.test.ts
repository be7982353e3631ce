import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import type { CliIo } from '../src/cli/client.js';
import { runCli } from '../src/cli/main.js';
import { DEFAULT_DRIVER_POLICY } from '../src/cli/watch-deploy.js';
import { silentLog } from '../src/log.js';
import { DEFAULT_PROCESS_LEASE, reapDeadProcesses, startProcessLease } from '../src/process-lease.js';
import { createDeploymentRun } from '../src/qa/deployment-runs.js';
import { sweepCloseouts } from '../src/qa/dispatch.js';
import { dispatchIdempotent, envelopeHash } from '../src/qa/idempotent-dispatch.js';
import { startApi } from './helpers/api-server.js';
import { REPO, makeDeliveryHarness } from './helpers/delivery.js';
import { noTimers } from './helpers/fleet.js';

// TR12: what a yoke process holds (a dispatch reservation, a close-out claim)
// is its own while its lease lives: another process's start never frees it,
// and it is freed once the holder is gone: at once on the same host (its pid
// is not running), when its lease lapses elsewhere.

// Nothing is attached: the leases are what these tests are about, so the stage may settle empty (TR29).
const QA_ONLY = { delivery: { stages: [{ name: 'qa', kind: 'qa', allow_empty: true }, { name: 'production', kind: 'deploy', command: './deploy.sh production' }] } };

/** The pid of a process that has exited: a yoke that was killed. */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '0']).pid!;

async function setup() {
  const h = await makeDeliveryHarness({ config: QA_ONLY });
  const r = await createDeploymentRun(h.fleet, { repo: REPO, creator: 'maint' });
  if (!r.ok) throw new Error(r.refusal.message);
  return { ...h, run: r.value.id, env: { driver: 'drv', lease: null, stage: 'qa', commit: r.value.commit } };
}

const deps = (h: Awaited<ReturnType<typeof setup>>, over: { host?: string; pid?: number } = {}) => ({ store: h.store, clock: h.clock, timers: noTimers, log: silentLog, host: over.host ?? hostname(), pid: over.pid ?? process.pid });
const held = () => new Promise<void>(() => {});

describe('TR12 process leases', () => {
  it('TR12 the database door starting beside the live server fails none of its reservations, so one request id never runs twice at once', async () => {
    const h = await setup();
    // The server (this test's harness process) has a gate check in flight: its reservation, as dispatch writes it before the check runs.
    await h.store.dispatchRequests.reserve({ requestId: 'gate-check-1', runId: h.run, stage: 'qa', envelopeHash: envelopeHash(h.run, h.env), driver: 'drv', owner: h.fleet.processId, at: h.clock.now() });
    expect(await h.store.dispatchRequests.get('gate-check-1')).toMatchObject({ state: 'in_flight', owner: h.fleet.processId });
    // The door opens on the same database, as its own process (its parent, the driver, runs).
    const door = await startProcessLease(deps(h, { pid: process.ppid }), DEFAULT_PROCESS_LEASE, 'p-door');
    expect((await h.store.dispatchRequests.get('gate-check-1'))?.state).toBe('in_flight');
    const copy = await dispatchIdempotent({ ...h.fleet, processId: door.id }, h.run, 'qa', 'gate-check-1', h.env, { responseLimitMs: 25_000 }, held);
    expect(JSON.parse(copy.body).error.code).toBe('idempotency_request_in_flight');
    expect(await h.store.dispatchRequests.get('gate-check-1')).toMatchObject({ state: 'in_flight', attempts: 1 });
  });

  it("TR12 a crashed door's reservation is freed by the server's next renewal, with no restart; a process on another host only once its lease lapses", async () => {
    const h = await setup();
    await h.store.processes.register({ id: 'p-door', host: hostname(), pid: deadPid(), at: h.clock.now(), leaseMs: DEFAULT_PROCESS_LEASE.leaseMs });
    await h.store.processes.register({ id: 'p-far', host: 'another-host', pid: 4242, at: h.clock.now(), leaseMs: DEFAULT_PROCESS_LEASE.leaseMs });
    await h.store.dispatchRequests.reserve({ requestId: 'door-check', runId: h.run, stage: 'qa', envelopeHash: envelopeHash(h.run, h.env), driver: 'drv', owner: 'p-door', at: h.clock.now() });
    await h.store.dispatchRequests.reserve({ requestId: 'far-check', runId: 'dr-elsewhere', stage: 'qa', envelopeHash: 'y', driver: 'drv', owner: 'p-far', at: h.clock.now() });
    // The server's renewal looks at this host's processes: the door's pid is gone.
    expect(await reapDeadProcesses(deps(h), h.fleet.processId)).toEqual(['p-door']);
    expect([(await h.store.dispatchRequests.get('door-check'))?.state, (await h.store.dispatchRequests.get('far-check'))?.state]).toEqual(['failed', 'in_flight']);
    h.clock.advance(DEFAULT_PROCESS_LEASE.leaseMs);
    await reapDeadProcesses(deps(h), h.fleet.processId);
    expect((await h.store.dispatchRequests.get('far-check'))?.state).toBe('failed');
    // The id that was freed runs again, once, and is then replayed as recorded.
    const again = await dispatchIdempotent(h.fleet, h.run, 'qa', 'door-check', h.env, { responseLimitMs: 25_000 }, held);
    expect([again.status, JSON.parse(again.body).state]).toEqual([200, 'settled']);
    expect(await h.store.dispatchRequests.get('door-check')).toMatchObject({ state: 'completed', attempts: 2, owner: h.fleet.processId });
  });

  it('TR12 a yoke killed mid close-out: the run is closing, not succeeded, and the driver waits; the restart takes the claim over at once, and only then does the run succeed', async () => {
    const h = await setup();
    // The killed yoke: its lease has not lapsed yet, but its pid is gone. It held APP-2's close-out.
    await h.store.processes.register({ id: 'p-killed', host: hostname(), pid: deadPid(), at: h.clock.now(), leaseMs: DEFAULT_PROCESS_LEASE.leaseMs });
    expect(await h.store.closeouts.claim(h.run, 2, 'qa', h.clock.now(), 'p-killed', h.fleet.policy.closeoutStaleMs)).toBe(true);
    const api = await startApi(h, { tokens: ['op-token'] });
    const out: string[] = [];
    const err: string[] = [];
    let restarted = false;
    const io: CliIo = {
      out: (l) => out.push(l),
      err: (l) => err.push(l),
      env: { YOKE_URL: api.url, YOKE_TOKEN: 'op-token' },
      fetch,
      exec: async () => ({ code: 0, output: 'deployed' }),
    };
    const code = await runCli(['watch', 'deploy', '--json', '--driver', 'ci-7', '--', h.run], io, {
      policy: DEFAULT_DRIVER_POLICY,
      sleep: async (ms) => {
        h.clock.advance(ms);
        if (restarted) return;
        // While the driver waits on the closing run, nothing has closed APP-2 and the run has not succeeded.
        expect(await h.store.deployments.get(h.run)).toMatchObject({ status: 'active' });
        expect((await h.store.closeouts.forRun(h.run)).find((c) => c.issueNumber === 2)?.state).toBe('running');
        // yoke starts again on this host: the killed process is known dead, and the sweep takes its claim over.
        restarted = true;
        await startProcessLease(deps(h), DEFAULT_PROCESS_LEASE, 'p-restarted');
        await sweepCloseouts(h.fleet);
      },
    });
    await api.close();
    expect([code, err]).toEqual([0, []]);
    const events = out.map((l) => JSON.parse(l) as { event: string; owed?: { item: string; detail: string }[] });
    expect(events.find((e) => e.event === 'closing')?.owed).toEqual([{ item: 'APP-2', detail: 'its close-out is running', command: null }]);
    expect(events.at(-1)).toEqual({ event: 'done', run: h.run, status: 'succeeded' });
    expect((await h.store.closeouts.forRun(h.run)).map((c) => [c.issueNumber, c.state])).toEqual([
      [1, 'closed'],
      [2, 'closed'],
      [3, 'closed'],
    ]);
    expect(h.forge.comments.filter((c) => c.number === 102 && c.body.includes('is delivered'))).toHaveLength(1);
    expect(h.forge.repo(REPO).issues.find((i) => i.number === 2)!.labels).toContain('yoke:delivered');
  });
});
