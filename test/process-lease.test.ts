import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { commandContainmentProblem } from '../src/cli/exec.js';
import { openStoreAt } from '../src/store/store.js';
import type { CliIo } from '../src/cli/client.js';
import { runCli } from '../src/cli/main.js';
import { DEFAULT_DRIVER_POLICY } from '../src/cli/watch-deploy.js';
import { silentLog } from '../src/kernel/log.js';
import {
  DEFAULT_PROCESS_LEASE,
  localIdentity,
  localMachine,
  reapDeadProcesses,
  startProcessLease,
} from '../src/process-lease.js';
import { createDeploymentRun } from '../src/delivery/runs/deployment-runs.js';
import { sweepCloseouts } from '../src/delivery/gate/check.js';
import { dispatchIdempotent, envelopeHash } from '../src/delivery/gate/idempotent-check.js';
import { startApi } from './helpers/api-server.js';
import { REPO, makeDeliveryHarness } from './helpers/delivery.js';
import { noTimers } from './helpers/fleet.js';

// TR12: what a yoke process holds (a dispatch reservation, a close-out claim)
// is its own while its lease lives: another process's start never frees it,
// and it is freed once the holder is gone: at once on the same host (its pid
// is not running), when its lease lapses elsewhere.

// Nothing is attached: the leases are what these tests are about, so the stage may settle empty (TR29).
const QA_ONLY = {
  delivery: {
    stages: [
      { name: 'qa', kind: 'qa', allow_empty: true },
      { name: 'production', kind: 'deploy', command: './deploy.sh production' },
    ],
  },
};

/** The pid of a process that has exited: a yoke that was killed. */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '0']).pid!;

async function setup() {
  const h = await makeDeliveryHarness({ config: QA_ONLY });
  const r = await createDeploymentRun(h.fleet, { repo: REPO, creator: 'maint' });
  if (!r.ok) throw new Error(r.refusal.message);
  return { ...h, run: r.value.id, env: { driver: 'drv', lease: null, stage: 'qa', commit: r.value.commit } };
}

const deps = (h: Awaited<ReturnType<typeof setup>>, pid: number = process.pid) => ({
  store: h.store,
  clock: h.clock,
  timers: noTimers,
  log: silentLog,
  identity: localIdentity(pid),
});
const held = () => new Promise<void>(() => {});

describe('TR12 process leases', () => {
  it('TR12 the database door starting beside the live server fails none of its reservations, so one request id never runs twice at once', async () => {
    const h = await setup();
    // The server (this test's harness process) has a gate check in flight: its reservation, as dispatch writes it before the check runs.
    await h.store.dispatchRequests.reserve({
      requestId: 'gate-check-1',
      runId: h.run,
      stage: 'qa',
      envelopeHash: envelopeHash(h.run, h.env),
      driver: 'drv',
      owner: h.fleet.processId,
      at: h.clock.now(),
    });
    expect(await h.store.dispatchRequests.get('gate-check-1')).toMatchObject({
      state: 'in_flight',
      owner: h.fleet.processId,
    });
    // The door opens on the same database, as its own process (its parent, the driver, runs).
    const door = await startProcessLease(deps(h, process.ppid), DEFAULT_PROCESS_LEASE, 'p-door');
    expect((await h.store.dispatchRequests.get('gate-check-1'))?.state).toBe('in_flight');
    const copy = await dispatchIdempotent(
      { ...h.fleet, processId: door.id },
      { runId: h.run, stage: 'qa', requestId: 'gate-check-1', envelope: h.env },
      { responseLimitMs: 25_000 },
      held,
    );
    expect(JSON.parse(copy.body).error.code).toBe('idempotency_request_in_flight');
    expect(await h.store.dispatchRequests.get('gate-check-1')).toMatchObject({ state: 'in_flight', attempts: 1 });
  });

  it("TR12 a crashed door's reservation is freed by the server's next renewal, with no restart; a process in another pid namespace, even under this hostname, only once its lease lapses", async () => {
    const h = await setup();
    await h.store.processes.register({
      id: 'p-door',
      host: hostname(),
      pid: deadPid(),
      machine: localMachine(),
      leaseMs: DEFAULT_PROCESS_LEASE.leaseMs,
    });
    await h.store.processes.register({
      id: 'p-far',
      host: hostname(),
      pid: 4242,
      machine: 'another-boot/pid:[4026531836]',
      leaseMs: DEFAULT_PROCESS_LEASE.leaseMs,
    });
    await h.store.dispatchRequests.reserve({
      requestId: 'door-check',
      runId: h.run,
      stage: 'qa',
      envelopeHash: envelopeHash(h.run, h.env),
      driver: 'drv',
      owner: 'p-door',
      at: h.clock.now(),
    });
    await h.store.dispatchRequests.reserve({
      requestId: 'far-check',
      runId: 'dr-elsewhere',
      stage: 'qa',
      envelopeHash: 'y',
      driver: 'drv',
      owner: 'p-far',
      at: h.clock.now(),
    });
    // The server's renewal looks at this host's processes: the door's pid is gone.
    expect(await reapDeadProcesses(deps(h), h.fleet.processId)).toEqual(['p-door']);
    expect([
      (await h.store.dispatchRequests.get('door-check'))?.state,
      (await h.store.dispatchRequests.get('far-check'))?.state,
    ]).toEqual(['failed', 'in_flight']);
    h.clock.advance(DEFAULT_PROCESS_LEASE.leaseMs);
    await reapDeadProcesses(deps(h), h.fleet.processId);
    expect((await h.store.dispatchRequests.get('far-check'))?.state).toBe('failed');
    // The id that was freed runs again, once, and is then replayed as recorded.
    const again = await dispatchIdempotent(
      h.fleet,
      { runId: h.run, stage: 'qa', requestId: 'door-check', envelope: h.env },
      { responseLimitMs: 25_000 },
      held,
    );
    expect([again.status, JSON.parse(again.body).state]).toEqual([200, 'settled']);
    expect(await h.store.dispatchRequests.get('door-check')).toMatchObject({
      state: 'completed',
      attempts: 2,
      owner: h.fleet.processId,
    });
  });

  it('TR12 a yoke killed mid close-out: the run is closing, not succeeded, and the driver waits; the restart takes the claim over at once, and only then does the run succeed', async () => {
    const h = await setup();
    // The killed yoke: its lease has not lapsed yet, but its pid is gone. It held APP-2's close-out.
    await h.store.processes.register({
      id: 'p-killed',
      host: hostname(),
      pid: deadPid(),
      machine: localMachine(),
      leaseMs: DEFAULT_PROCESS_LEASE.leaseMs,
    });
    expect(
      await h.store.closeouts.claim(h.run, 2, 'qa', h.clock.now(), 'p-killed', h.fleet.policy.closeoutStaleMs),
    ).toBe(true);
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
    const code = await runCli(['watch', 'deploy', '--json', '--driver', 'ci-7', '--', h.run], {
      ...io,
      driverPolicy: DEFAULT_DRIVER_POLICY,
      sleep: async (ms) => {
        h.clock.advance(ms);
        if (restarted) return;
        // While the driver waits on the closing run, nothing has closed APP-2 and the run has not succeeded.
        expect(await h.store.deploymentRuns.get(h.run)).toMatchObject({ status: 'active' });
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
    expect(events.find((e) => e.event === 'closing')?.owed).toEqual([
      { item: 'APP-2', detail: 'its close-out is running', command: null },
    ]);
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

/** A lease-holder process (test/helpers/lease-holder.ts) in a container of its own: its own pid namespace and /proc, and the hostname given. */
function containedHolder(target: string, id: string, host: string, extraPid: boolean) {
  const node = [
    process.execPath,
    '--import',
    import.meta.resolve('tsx'),
    join(import.meta.dirname, 'helpers/lease-holder.ts'),
    target,
    id,
  ];
  // The second container runs node under a shell that stays, so its pid differs from the first's: the case a pid check by hostname judges wrong.
  const command = extraPid ? ['sh', '-c', `${node.map((a) => `'${a}'`).join(' ')}; true`] : node;
  const child = spawn(
    'bwrap',
    [
      '--unshare-pid',
      '--unshare-uts',
      '--hostname',
      host,
      '--dev-bind',
      '/',
      '/',
      '--proc',
      '/proc',
      '--die-with-parent',
      ...command,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () =>
    JSON.parse(((await lines.next()).value as string | undefined) ?? 'null') as Record<string, unknown>;
  return { child, next, say: (line: string) => child.stdin.write(`${line}\n`) };
}

const bwrapProblem = commandContainmentProblem();
if (bwrapProblem)
  console.warn(`${bwrapProblem}: the two-container lease test is skipped. Install bubblewrap to run it.`);

describe('TR31 process identity', () => {
  const dir = mkdtempSync(join(tmpdir(), 'yoke-leases-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.skipIf(bwrapProblem !== null)(
    'TR31 two yoke processes in containers with one hostname and their own pid namespaces: neither judges the other dead, nor frees its reservation',
    async () => {
      const target = join(dir, 'shared.db');
      await (await openStoreAt(target)).close();
      const children: ChildProcess[] = [];
      try {
        const a = containedHolder(target, 'p-box-a', 'yoke-box', false);
        children.push(a.child);
        const aSays = await a.next();
        // b starts after a: its start runs the reap that used to free a's work.
        const b = containedHolder(target, 'p-box-b', 'yoke-box', true);
        children.push(b.child);
        const bSays = await b.next();
        expect([aSays.host, bSays.host]).toEqual(['yoke-box', 'yoke-box']);
        expect(aSays.pid).not.toBe(bSays.pid);
        expect(aSays.machine).not.toBe(bSays.machine);
        a.say('reap');
        b.say('reap');
        expect([await a.next(), await b.next()]).toEqual([{ reaped: [] }, { reaped: [] }]);
        const store = await openStoreAt(target);
        expect((await store.processes.living()).map((p) => p.id).sort()).toEqual(['p-box-a', 'p-box-b']);
        expect([
          (await store.dispatchRequests.get('check-of-p-box-a'))?.state,
          (await store.dispatchRequests.get('check-of-p-box-b'))?.state,
        ]).toEqual(['in_flight', 'in_flight']);
        // A process that stops cleanly ends its own lease, and what it held is freed at once.
        a.say('stop');
        await new Promise((r) => a.child.once('exit', r));
        b.say('reap');
        await b.next();
        expect([
          (await store.dispatchRequests.get('check-of-p-box-a'))?.state,
          (await store.dispatchRequests.get('check-of-p-box-b'))?.state,
        ]).toEqual(['failed', 'in_flight']);
        await store.close();
        b.say('stop');
      } finally {
        for (const c of children) c.kill();
      }
    },
  );

  it('TR31 a pid that runs again, as another process started later, is known dead: the recorded start time no longer matches', async () => {
    const h = await setup();
    const sleeper = spawn('sleep', ['30']);
    try {
      // p-old was recorded with this pid and another start time: the pid has since been reused.
      await h.store.processes.register({
        id: 'p-old',
        host: hostname(),
        pid: sleeper.pid!,
        machine: localMachine(),
        pidStart: '1',
        leaseMs: DEFAULT_PROCESS_LEASE.leaseMs,
      });
      await h.store.processes.register({
        id: 'p-sleeper',
        ...localIdentity(sleeper.pid!),
        leaseMs: DEFAULT_PROCESS_LEASE.leaseMs,
      });
      expect(await reapDeadProcesses(deps(h), h.fleet.processId)).toEqual(['p-old']);
    } finally {
      sleeper.kill();
    }
  });
});
