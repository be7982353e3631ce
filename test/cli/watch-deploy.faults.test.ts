import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { httpsTransport } from '../../src/cli/driver-transport.js';
import { DEFAULT_DRIVER_POLICY, Driver, DriverStop, EXIT, type DriverEvent } from '../../src/cli/watch-deploy.js';
import type { RepoRef, ReviewView } from '../../src/forge/types.js';
import { createDeploymentRun } from '../../src/delivery/runs/deployment-runs.js';
import { checkIn, startExecution } from '../../src/delivery/runs/executions.js';
import { openStore } from '../../src/store/store.js';
import { startApi } from '../helpers/api-server.js';
import { FakeForge } from '../helpers/fake-forge.js';
import { REPO, makeDeliveryHarness } from '../helpers/delivery.js';

// The driver against real contention points and a server cut mid-dispatch, over HTTP.

const QA_ONLY = { delivery: { stages: [{ name: 'qa', kind: 'qa' }] } };
let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers) await c();
  closers = [];
});

class HeldForge extends FakeForge {
  hold: Promise<void> | null = null;
  /** Calls that have reached the hold and wait on it. */
  holding = 0;
  override async listReviews(repo: RepoRef, pr: number): Promise<ReviewView[]> {
    if (this.hold) {
      this.holding++;
      await this.hold;
    }
    return super.listReviews(repo, pr);
  }
}

async function setup(forge?: FakeForge, dispatch?: { responseLimitMs: number; hostedCapMs: number }) {
  const h = await makeDeliveryHarness({ config: QA_ONLY, forge });
  await h.attach(1, 'checkout');
  await h.attach(2, 'smoke');
  await h.attach(3, 'smoke');
  const run = await createDeploymentRun(h.fleet, { repo: REPO });
  if (!run.ok) throw new Error(run.refusal.message);
  const api = await startApi(h, { tokens: ['op-token'], dispatch });
  closers.push(api.close);
  return { h, run: run.value, api };
}

function driverFor(url: string, id = 'ci-7') {
  const slept: number[] = [];
  const events: DriverEvent[] = [];
  const d = new Driver({
    transport: httpsTransport({ out: () => {}, err: () => {}, env: {}, fetch }, { url, token: 'op-token' }, 5_000),
    policy: DEFAULT_DRIVER_POLICY,
    sleep: async (ms) => void slept.push(ms),
    exec: async () => ({ code: 0, output: '' }),
    emit: (e) => events.push(e),
    driverId: id,
  });
  return { d, slept, events };
}

describe('the driver against held contention points', () => {
  const holds: [string, (s: Awaited<ReturnType<typeof setup>>) => Promise<void>][] = [
    [
      'qa_checkin_busy',
      async ({ h, run }) => void (await checkIn(h.fleet, run.id, { driver: 'another-driver', lease_seconds: 3600 })),
    ],
    [
      'qa_ownership_busy',
      async ({ h, run }) =>
        void (await h.store.workLocks.take(`freeze:${run.id}:qa`, 'freeze-held', h.clock.now(), 3_600_000)),
    ],
    [
      'run_busy',
      async ({ h, run }) =>
        await h.store.dispatchRequests.reserve({
          requestId: 'held-request',
          runId: run.id,
          stage: 'qa',
          envelopeHash: 'x',
          driver: 'another-driver',
          owner: h.fleet.processId,
          at: h.clock.now(),
        }),
    ],
    [
      'qa_plan_busy',
      async ({ h, run }) =>
        void (await startExecution(
          h.fleet,
          { runId: run.id, stage: 'qa' },
          { plan: 'smoke', lease_seconds: 3600 },
          null,
        )),
    ],
  ];
  for (const [code, hold] of holds) {
    it(`DX12/DX14 ${code}: retried after 15, 30, then 60 s, six times, then deployment_run_stayed_busy with the run unchanged`, async () => {
      const s = await setup();
      await hold(s);
      const before = JSON.stringify([
        await s.h.store.deploymentRuns.get(s.run.id),
        await s.h.store.deploymentRuns.stages(s.run.id),
        await s.h.store.qa.wakes(s.run.id),
        s.h.forge.comments.length,
      ]);
      const { d, slept, events } = driverFor(s.api.url);
      let stop: DriverStop | null = null;
      try {
        await d.gateCheck(s.run.id, 'qa', s.run.commit);
      } catch (err) {
        stop = err as DriverStop;
      }
      expect([stop?.exitCode, stop?.refusal.code]).toEqual([EXIT.stayedBusy, 'deployment_run_stayed_busy']);
      expect(slept).toEqual([15_000, 30_000, 60_000, 60_000, 60_000, 60_000]);
      expect(new Set(events.filter((e) => e.event === 'retry').map((e) => e.code))).toEqual(new Set([code]));
      expect(
        JSON.stringify([
          await s.h.store.deploymentRuns.get(s.run.id),
          await s.h.store.deploymentRuns.stages(s.run.id),
          await s.h.store.qa.wakes(s.run.id),
          s.h.forge.comments.length,
        ]),
      ).toBe(before);
    });
  }

  it('DX12/DX14 deployment_start_lock_busy: a start is retried on the same schedule, and no run is created', async () => {
    const h = await makeDeliveryHarness({ config: QA_ONLY });
    const api = await startApi(h, { tokens: ['op-token'] });
    closers.push(api.close);
    await h.store.workLocks.take(`start:${REPO}`, 'start-held', h.clock.now(), 3_600_000);
    const { d, slept } = driverFor(api.url);
    const stop = (await d.create({ repo: REPO }).catch((err: unknown) => err)) as DriverStop;
    expect([stop.exitCode, stop.refusal.code, slept]).toEqual([
      EXIT.stayedBusy,
      'deployment_run_stayed_busy',
      [15_000, 30_000, 60_000, 60_000, 60_000, 60_000],
    ]);
    expect(await h.store.deploymentRuns.list()).toEqual([]);
  });

  it("DX12/DX14 lock_timeout and statement_cancelled: SQLite's own contention is retried on the same schedule", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'yoke-driver-busy-'));
    closers.push(async () => rmSync(dir, { recursive: true, force: true }));
    const store = openStore(join(dir, 'yoke.db'), { busyTimeoutMs: 10 });
    const h = await makeDeliveryHarness({ config: QA_ONLY, store });
    await h.attach(1, 'checkout');
    const run = await createDeploymentRun(h.fleet, { repo: REPO });
    if (!run.ok) throw new Error(run.refusal.message);
    const api = await startApi(h, { tokens: ['op-token'] });
    closers.push(api.close);
    const other = new Database(join(dir, 'yoke.db'));
    other.exec('BEGIN IMMEDIATE');
    const locked = driverFor(api.url);
    const stop = (await locked.d
      .gateCheck(run.value.id, 'qa', run.value.commit)
      .catch((err: unknown) => err)) as DriverStop;
    expect([
      stop.refusal.code,
      locked.slept.length,
      new Set(locked.events.filter((e) => e.event === 'retry').map((e) => e.code)),
    ]).toEqual(['deployment_run_stayed_busy', 6, new Set(['lock_timeout'])]);
    other.exec('ROLLBACK');
    other.close();
    const write = store.write;
    store.write = () => {
      throw Object.assign(new Error('interrupted'), { code: 'SQLITE_INTERRUPT' });
    };
    const cancelled = driverFor(api.url);
    const stop2 = (await cancelled.d
      .gateCheck(run.value.id, 'qa', run.value.commit)
      .catch((err: unknown) => err)) as DriverStop;
    expect([
      stop2.refusal.code,
      cancelled.slept.length,
      new Set(cancelled.events.filter((e) => e.event === 'retry').map((e) => e.code)),
    ]).toEqual(['deployment_run_stayed_busy', 6, new Set(['statement_cancelled'])]);
    store.write = write;
    expect(await store.dispatchRequests.inFlightFor(run.value.id, '')).toBeUndefined();
    expect((await driverFor(api.url).d.gateCheck(run.value.id, 'qa', run.value.commit)).state).toBe('waiting');
    await store.close();
  });

  it('a lapsed lease is taken over: the new driver gets a new tenure', async () => {
    const s = await setup();
    const a = await checkIn(s.h.fleet, s.run.id, { driver: 'old-driver', lease_seconds: 1 });
    s.h.clock.advance(2_000);
    const b = await checkIn(s.h.fleet, s.run.id, { driver: 'new-driver', lease_seconds: 60 });
    expect([
      a.ok && a.value.tookOver,
      b.ok && b.value.tookOver,
      a.ok && b.ok && a.value.lease !== b.value.lease,
    ]).toEqual([false, true, true]);
  });
});

describe('a dispatch slower than the response limit', () => {
  it('DX08 answers 202 with its reservation; the driver waits on it, within the hosted cap, and gets the recorded result', async () => {
    const forge = new HeldForge();
    const s = await setup(forge, { responseLimitMs: 50, hostedCapMs: 200 });
    forge.hold = new Promise((r) => setTimeout(r, 500));
    const { d, events, slept } = driverFor(s.api.url);
    const t0 = Date.now();
    const answer = await d.gateCheck(s.run.id, 'qa', s.run.commit);
    expect(answer.state).toBe('waiting');
    // Each wait asked for 60 s and was held to the 200 ms cap; no busy retry was spent.
    expect(events.filter((e) => e.event === 'recover').length).toBeGreaterThanOrEqual(2);
    expect(slept).toEqual([]);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(await s.h.store.dispatchRequests.get(answer.request)).toMatchObject({ state: 'completed', attempts: 1 });
  });
});

describe('a server cut mid-dispatch', () => {
  it("DX07/DX08 yoke goes down mid-dispatch and starts again: the driver's result waits find the id freed, send it again, and it acts once", async () => {
    const forge = new HeldForge();
    const s = await setup(forge);
    let die!: (err: Error) => void;
    const hold = new Promise<void>((_, reject) => (die = reject));
    hold.catch(() => undefined); // its death is met by the dispatch holding on it
    forge.hold = hold;
    const { d, events } = driverFor(s.api.url);
    const gate = d.gateCheck(s.run.id, 'qa', s.run.commit);
    // The dying process is mid-dispatch: its reservation recorded and its work waiting on GitHub. (Killed any
    // earlier, on a loaded machine its work could still pass the hold once it is lifted, and finish as if alive.)
    while (!(await s.h.store.dispatchRequests.inFlightFor(s.run.id, '')) || forge.holding === 0)
      await new Promise((r) => setTimeout(r, 5));
    const key = (await s.h.store.dispatchRequests.inFlightFor(s.run.id, ''))!.requestId;
    // The process dies: its connections are cut and its work never records a result.
    const port = Number(new URL(s.api.url).port);
    await s.api.close();
    closers = [];
    die(new Error('the process died'));
    forge.hold = null;
    // TR12: its lease is over; yoke starts again, as a new process, on the same database and address, and what the dead one held in flight is freed.
    await s.h.store.processes.end(s.h.fleet.processId);
    await s.h.store.processes.register({ id: 'p-restarted', host: 'test-host', pid: 2, leaseMs: 3_600_000 });
    const again = await startApi(
      { ...s.h, fleet: { ...s.h.fleet, processId: 'p-restarted' } },
      { tokens: ['op-token'], port },
    );
    closers.push(again.close);
    const answer = await gate;
    expect(answer).toMatchObject({ request: key, state: 'waiting' });
    expect(events.filter((e) => e.event === 'recover').length).toBeGreaterThanOrEqual(1);
    expect(await s.h.store.dispatchRequests.get(key)).toMatchObject({ state: 'completed', attempts: 2 });
    // Acted once: one wake per wait, one notice per subject.
    expect((await s.h.store.qa.wakes(s.run.id)).map((w) => w.waitKey).sort()).toEqual([
      'APP-1:item_case_pending:checkout/cart',
      'APP-1:item_case_pending:checkout/looks-right',
    ]);
    const notices = await s.h.store.notices.forRun(s.run.id);
    expect(new Set(notices.map((n) => `${n.audience}/${n.subject}`)).size).toBe(notices.length);
  });
});
