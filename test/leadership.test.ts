import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { LeadershipLost } from '../src/kernel/fence.js';
import { DEFAULT_LEADERSHIP, Leadership } from '../src/leadership.js';
import { silentLog, type Log } from '../src/kernel/log.js';
import { LeaderStore } from '../src/store/leaders.js';
import { openStoreAt } from '../src/store/store.js';
import { FakeForge } from './helpers/fake-forge.js';
import { FakeLauncher, ManualClock, makeHarness, until } from './helpers/fleet.js';
import { useEngines } from './helpers/engines.js';
import { havePostgres, usePostgres } from './helpers/postgres.js';

// One leader for the ticks across processes sharing a store: each "process"
// here has a connection of its own (two SQLite handles on one file, two pg
// pools on one database). Leases run on the database's clock (TR31): `db`
// stands in for it where a test moves time, and each process's own clock
// plays no part.

const engines = useEngines();
const pg = usePostgres();
const run = promisify(execFile);

function recordingLog(lines: string[]): Log {
  return {
    info: (_o, m) => lines.push(`info: ${m}`),
    warn: (_o, m) => lines.push(`warn: ${m}`),
    error: (_o, m) => lines.push(`error: ${m}`),
  };
}

for (const engine of engines) {
  describe.skipIf(engine.skip)(`leadership of the ticks on ${engine.name}`, () => {
    it('TR13 one process leads; when it dies a follower takes over within two of its ticks, and never are there two', async () => {
      const connection = await engine.shared();
      const db = new ManualClock();
      const process = (id: string, lines: string[] = []) => {
        return new Leadership({
          leaders: new LeaderStore(connection(), async () => db.now()),
          processId: id,
          log: recordingLog(lines),
          policy: DEFAULT_LEADERSHIP,
        });
      };
      const aLog: string[] = [];
      const a = process('p-a', aLog);
      const b = process('p-b');
      const c = process('p-c');
      expect(await a.holds()).toBe(true);
      expect([await b.holds(), await c.holds()]).toEqual([false, false]);
      // The leader renews every 10 s; the followers try at every reaper tick (30 s) and never win while it lives.
      for (let t = 0; t < 12; t++) {
        db.advance(10_000);
        expect(await a.holds()).toBe(true);
        if (t % 3 === 2) expect([await b.holds(), await c.holds()]).toEqual([false, false]);
      }
      // The leader is killed: it renews no more. Followers tick every 30 s.
      let ticks = 0;
      let leader: string | null = null;
      while (!leader) {
        db.advance(30_000);
        ticks++;
        const won = [(await b.holds()) ? 'p-b' : null, (await c.holds()) ? 'p-c' : null].filter(Boolean);
        expect(won.length).toBeLessThanOrEqual(1);
        leader = won[0] ?? null;
        expect(ticks).toBeLessThanOrEqual(2);
      }
      // The old leader, back from a stall, learns at its next renewal that it leads no more.
      expect(await a.holds()).toBe(false);
      expect(aLog).toEqual(['info: this process leads the ticks', 'warn: another process leads the ticks now']);
      const other = leader === 'p-b' ? c : b;
      expect(await other.holds()).toBe(false);
    });

    it('TR13 a clean stop gives the lead up at once: a follower takes it at its next tick, with no lease to wait out', async () => {
      const connection = await engine.shared();
      const db = new ManualClock();
      const timers = { setInterval: () => 1, clearInterval: () => {} };
      const a = new Leadership({
        leaders: new LeaderStore(connection(), async () => db.now()),
        processId: 'p-a',
        log: silentLog,
        policy: DEFAULT_LEADERSHIP,
      });
      const b = new Leadership({
        leaders: new LeaderStore(connection(), async () => db.now()),
        processId: 'p-b',
        log: silentLog,
        policy: DEFAULT_LEADERSHIP,
      });
      const renewing = a.start(timers);
      expect(await a.holds()).toBe(true);
      expect(await b.holds()).toBe(false);
      await renewing.stop();
      expect(await b.holds()).toBe(true);
    });

    it("TR31 a stalled leader's fence shuts once another process leads, and stays shut when it leads again", async () => {
      const connection = await engine.shared();
      const db = new ManualClock();
      const aLog: string[] = [];
      const a = new Leadership({
        leaders: new LeaderStore(connection(), async () => db.now()),
        processId: 'p-a',
        log: recordingLog(aLog),
        policy: DEFAULT_LEADERSHIP,
      });
      const b = new Leadership({
        leaders: new LeaderStore(connection(), async () => db.now()),
        processId: 'p-b',
        log: silentLog,
        policy: DEFAULT_LEADERSHIP,
      });
      const fence = (await a.fence())!;
      await fence.check('a first write');
      // p-a stalls for a minute, twice its lease; p-b takes the lead.
      db.advance(60_000);
      expect(await b.fence()).not.toBeNull();
      await expect(fence.check('merging PR #4')).rejects.toThrow(new LeadershipLost(1, 'merging PR #4'));
      // p-b stops cleanly; p-a leads again, in a new epoch: the stalled tick's fence is still shut, and says so once.
      await b.start({ setInterval: () => 1, clearInterval: () => {} }).stop();
      const again = (await a.fence())!;
      expect(again.epoch).toBe(3);
      await expect(fence.check('commenting on #4')).rejects.toBeInstanceOf(LeadershipLost);
      await again.check('a write of the new tick');
      expect(aLog.filter((l) => l.startsWith('warn'))).toEqual([
        'warn: this process lost the lead mid-tick; the rest of the tick writes nothing outside the store',
      ]);
    });
  });
}

describe('leadership across processes whose clocks disagree (TR31)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'yoke-skew-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const targets: { name: string; skip: boolean; target: () => Promise<string> }[] = [
    { name: 'SQLite', skip: false, target: async () => join(dir, 'skew.db') },
    { name: 'PostgreSQL', skip: !havePostgres, target: () => pg.db() },
  ];
  for (const t of targets) {
    it.skipIf(t.skip)(
      `TR31 on ${t.name}, a process whose clock runs an hour ahead never takes a live lead, and one an hour behind renews a lease as long as the database's clock says`,
      async () => {
        const target = await t.target();
        await (await openStoreAt(target)).close();
        const ask = async (holder: string, skewMs: number) => {
          const { stdout } = await run(process.execPath, [
            '--import',
            import.meta.resolve('tsx'),
            join(import.meta.dirname, 'helpers/skewed-leader.ts'),
            target,
            holder,
            String(skewMs),
          ]);
          return JSON.parse(stdout.trim()) as { leads: boolean; ownClock: string };
        };
        // p-right's clock is right; it leads for a minute by the database's clock.
        expect(await ask('p-right', 0)).toMatchObject({ leads: true });
        // p-ahead believes it is an hour later: by its own clock p-right's lease lapsed long ago.
        const ahead = await ask('p-ahead', 3_600_000);
        expect(new Date(ahead.ownClock).getTime() - Date.now()).toBeGreaterThan(3_500_000);
        expect(ahead.leads).toBe(false);
        // p-right, its clock now an hour behind, renews: it still leads, in the same epoch.
        const store = await openStoreAt(target);
        const before = await store.leaders.current('ticks');
        expect(await ask('p-right', -3_600_000)).toMatchObject({ leads: true });
        expect((await store.leaders.current('ticks'))!.epoch).toBe(before!.epoch);
        // Its lease lasts a minute from the database's now, not from its own clock's.
        expect((await store.leaders.current('ticks'))!.leaseUntil).toBeGreaterThan(Date.now() + 50_000);
        await store.close();
      },
    );
  }
});

describe("a follower's ticks", () => {
  it("TR13 launch nothing; the leader's do", async () => {
    let leads = false;
    const handles: (() => void)[] = [];
    const h = makeHarness({
      timers: { setInterval: (fn) => (handles.push(fn), handles.length), clearInterval: () => {} },
      leads: async () => leads,
    });
    h.forge.addRepo('acme/api', { auto: true });
    h.forge.addIssue('acme/api', 1);
    h.engine.start();
    for (const tick of handles) tick();
    await new Promise((r) => setTimeout(r, 50));
    expect(h.launcher.starts).toEqual([]);
    leads = true;
    handles[0]!();
    await until(() => h.launcher.starts.length > 0, "the leader's tick to launch");
    expect(h.launcher.starts.map((s) => s.kind)).toEqual(['afk_auto']);
  });
});

/** A forge whose installation listing waits while `stalled` is set: a leader that stalls mid-tick (a long pause, a cut connection). */
class StallingForge extends FakeForge {
  stalled: Promise<void> | null = null;
  waiting = 0;
  override async listInstallations(): Promise<number[]> {
    if (this.stalled) (this.waiting++, await this.stalled);
    return super.listInstallations();
  }
}

describe("a stalled leader's tick (TR31)", () => {
  it('TR31 a leader that stalls past its lease and wakes mid-tick launches nothing: its recorded run ends with the reason and no strike, and the new leader launches the work', async () => {
    const db = new ManualClock();
    const forge = new StallingForge();
    const aLog: string[] = [];
    // Two yoke processes on one store and one GitHub, p-a and p-b: each its engine, launcher and leadership.
    const store = makeHarness({ forge, clock: db }).store;
    const leadership = (id: string, log: Log = silentLog) =>
      new Leadership({ leaders: store.leaders, processId: id, log, policy: DEFAULT_LEADERSHIP });
    const aLead = leadership('p-a', recordingLog(aLog));
    const bLead = leadership('p-b');
    const a = makeHarness({ forge, clock: db, store, launcher: new FakeLauncher() });
    const b = makeHarness({ forge, clock: db, store, launcher: new FakeLauncher() });
    forge.addRepo('acme/api', { auto: true });
    forge.addIssue('acme/api', 1);
    // p-a leads and starts its scheduler tick; it stalls before it has read anything.
    let wake!: () => void;
    forge.stalled = new Promise((r) => (wake = r));
    const aTick = a.engine.schedulerTick((await aLead.fence())!);
    await until(() => forge.waiting === 1, "p-a's tick to stall");
    // The stall outlasts p-a's lease; p-b takes the lead (its first tick is still to come).
    db.advance(DEFAULT_LEADERSHIP.leaseMs + 1);
    forge.stalled = null;
    const bFence = (await bLead.fence())!;
    expect(bFence.epoch).toBe(2);
    // p-a wakes: its pass reads, decides to launch #1, records the run, and is fenced out at the launch.
    wake();
    await expect(aTick).rejects.toBeInstanceOf(LeadershipLost);
    expect(a.launcher.starts).toEqual([]);
    expect(aLog).toEqual([
      'info: this process leads the ticks',
      'warn: this process lost the lead mid-tick; the rest of the tick writes nothing outside the store',
    ]);
    const [fenced] = await store.runs.listForRepo('acme/api');
    expect([fenced!.status, fenced!.outcome, fenced!.outcomeReason]).toEqual([
      'ended',
      'cancelled',
      `launch failed: this process no longer leads the ticks (it started this tick in epoch 1); it stopped before launching run ${fenced!.id}`,
    ]);
    expect((await store.repos.get('acme/api'))!.consecutiveFailures).toBe(0);
    // p-b's tick launches #1, once.
    await b.engine.schedulerTick(bFence);
    expect(b.launcher.starts.map((s) => [s.kind, s.subject])).toEqual([['afk_auto', 'issue#1']]);
  });
});
