import { describe, expect, it } from 'vitest';
import { DEFAULT_LEADERSHIP, Leadership } from '../src/leadership.js';
import { silentLog, type Log } from '../src/log.js';
import { LeaderStore } from '../src/store/leaders.js';
import { ManualClock, makeHarness, until } from './helpers/fleet.js';
import { useEngines } from './helpers/engines.js';

// One leader for the ticks across processes sharing a store: each "process"
// here has a connection of its own (two SQLite handles on one file, two pg
// pools on one database), and the clock is the test's.

const engines = useEngines();

function recordingLog(lines: string[]): Log {
  return { info: (_o, m) => lines.push(`info: ${m}`), warn: (_o, m) => lines.push(`warn: ${m}`), error: (_o, m) => lines.push(`error: ${m}`) };
}

for (const engine of engines) {
  describe.skipIf(engine.skip)(`leadership of the ticks on ${engine.name}`, () => {
    it('TR13 one process leads; when it dies a follower takes over within two of its ticks, and never are there two', async () => {
      const connection = await engine.shared();
      const clock = new ManualClock();
      const process = (id: string, lines: string[] = []) => {
        return new Leadership({ leaders: new LeaderStore(connection()), processId: id, clock, log: recordingLog(lines), policy: DEFAULT_LEADERSHIP });
      };
      const aLog: string[] = [];
      const a = process('p-a', aLog);
      const b = process('p-b');
      const c = process('p-c');
      expect(await a.holds()).toBe(true);
      expect([await b.holds(), await c.holds()]).toEqual([false, false]);
      // The leader renews every 10 s; the followers try at every reaper tick (30 s) and never win while it lives.
      for (let t = 0; t < 12; t++) {
        clock.advance(10_000);
        expect(await a.holds()).toBe(true);
        if (t % 3 === 2) expect([await b.holds(), await c.holds()]).toEqual([false, false]);
      }
      // The leader is killed: it renews no more. Followers tick every 30 s.
      let ticks = 0;
      let leader: string | null = null;
      while (!leader) {
        clock.advance(30_000);
        ticks++;
        const won = [await b.holds() ? 'p-b' : null, await c.holds() ? 'p-c' : null].filter(Boolean);
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
      const clock = new ManualClock();
      const timers = { setInterval: () => 1, clearInterval: () => {} };
      const a = new Leadership({ leaders: new LeaderStore(connection()), processId: 'p-a', clock, log: silentLog, policy: DEFAULT_LEADERSHIP });
      const b = new Leadership({ leaders: new LeaderStore(connection()), processId: 'p-b', clock, log: silentLog, policy: DEFAULT_LEADERSHIP });
      const renewing = a.start(timers);
      expect(await a.holds()).toBe(true);
      expect(await b.holds()).toBe(false);
      await renewing.stop();
      expect(await b.holds()).toBe(true);
    });
  });
}

describe("a follower's ticks", () => {
  it('TR13 launch nothing; the leader\'s do', async () => {
    let leads = false;
    const handles: (() => void)[] = [];
    const h = makeHarness({ timers: { setInterval: (fn) => (handles.push(fn), handles.length), clearInterval: () => {} }, leads: async () => leads });
    h.forge.addRepo('acme/api', { auto: true });
    h.forge.addIssue('acme/api', 1);
    h.engine.start();
    for (const tick of handles) tick();
    await new Promise((r) => setTimeout(r, 50));
    expect(h.launcher.starts).toEqual([]);
    leads = true;
    handles[0]!();
    await until(() => h.launcher.starts.length > 0, 'the leader\'s tick to launch');
    expect(h.launcher.starts.map((s) => s.kind)).toEqual(['afk_auto']);
  });
});
