import { describe, expect, it } from 'vitest';
import { ProcessStore } from '../../src/store/processes.js';
import { LeaderStore } from '../../src/store/leaders.js';
import { databaseClock } from '../../src/store/sql/sql.js';
import { storeOver } from '../../src/store/store.js';
import { useEngines } from '../helpers/engines.js';

// TR12's process leases and TR31's clock, on both engines. `db` stands in for
// the database's clock where a test moves time; the last test reads the real one.

for (const engine of useEngines()) {
  describe.skipIf(engine.skip)(`process leases on ${engine.name}`, () => {
    it('TR12 a process is alive while its lease lasts and renews it; an ended lease is not renewed, and lapsed ones are pruned', async () => {
      let db = Date.UTC(2026, 11, 1);
      const at = db;
      const p = new ProcessStore(await engine.fresh(), async () => db);
      await p.register({ id: 'p-a', host: 'h1', pid: 10, machine: 'boot/pid:[1]', pidStart: '77', leaseMs: 30_000 });
      db += 1;
      await p.register({ id: 'p-b', host: 'h2', pid: 11, leaseMs: 30_000 });
      db = at + 29_999;
      expect(await p.alive('p-a')).toBe(true);
      db = at + 30_000;
      expect(await p.alive('p-a')).toBe(false);
      // A lapsed lease does not renew itself: while it was lapsed, another process may have taken what it held.
      expect(await p.renew('p-a', 30_000)).toBe(false);
      expect(await p.alive('p-a')).toBe(false);
      await p.register({ id: 'p-a2', host: 'h1', pid: 10, leaseMs: 30_000 });
      db = at + 20_000;
      expect(await p.renew('p-b', 30_000)).toBe(true);
      db = at + 49_999;
      expect(await p.alive('p-b')).toBe(true);
      db = at + 40_000;
      expect((await p.living()).map((x) => [x.id, x.host, x.pid, x.machine, x.pidStart, x.aliveUntil])).toEqual([
        ['p-b', 'h2', 11, '', '', at + 50_000],
        ['p-a2', 'h1', 10, '', '', at + 60_000],
      ]);
      await p.end('p-b');
      db = at + 41_000;
      expect(await p.renew('p-b', 30_000)).toBe(false);
      expect(await p.alive('p-b')).toBe(false);
      db = at + 70_000;
      expect(await p.prune(0)).toBe(3);
      db = 0;
      expect(await p.living()).toEqual([]);
    });

    it('TR12 a process that stalled past its lease changes nothing another one took over: neither its close-out nor its dispatch result is recorded', async () => {
      let db = Date.UTC(2026, 11, 1);
      const store = storeOver(await engine.fresh(), undefined, async () => db);
      await store.processes.register({ id: 'p-old', host: 'h1', pid: 1, leaseMs: 30_000 });
      await store.processes.register({ id: 'p-new', host: 'h2', pid: 2, leaseMs: 90_000 });
      expect(await store.closeouts.claim('dr-1', 3, 'qa', db, 'p-old', 600_000)).toBe(true);
      await store.dispatchRequests.reserve({
        requestId: 'req-1',
        runId: 'dr-1',
        stage: 'qa',
        envelopeHash: 'h',
        driver: 'd',
        owner: 'p-old',
        at: db,
      });
      // p-old stalls past its lease; p-new takes both over and does the work again.
      db += 31_000;
      expect(await store.closeouts.claim('dr-1', 3, 'qa', db, 'p-new', 600_000)).toBe(true);
      expect(await store.dispatchRequests.failLapsed(db)).toBe(1);
      await store.dispatchRequests.reserve({
        requestId: 'req-1',
        runId: 'dr-1',
        stage: 'qa',
        envelopeHash: 'h',
        driver: 'd',
        owner: 'p-new',
        at: db,
      });
      // p-old wakes: its late writes change nothing.
      const refusal = { code: 'closeout_refused', message: 'stale', recovery: 'none' } as never;
      expect(await store.closeouts.finish('dr-1', 3, { state: 'refused', refusal }, db, 'p-old')).toBe(false);
      expect(await store.dispatchRequests.complete('req-1', 200, '{"stale":true}', db, 'p-old')).toBe(false);
      expect((await store.closeouts.forRun('dr-1'))[0]).toMatchObject({ state: 'running' });
      expect(await store.dispatchRequests.get('req-1')).toMatchObject({ state: 'in_flight', owner: 'p-new' });
      // p-new's own results are recorded.
      expect(await store.closeouts.finish('dr-1', 3, { state: 'closed', noticeCommentId: 9 }, db, 'p-new')).toBe(true);
      expect(await store.dispatchRequests.complete('req-1', 200, '{"fresh":true}', db, 'p-new')).toBe(true);
      expect((await store.closeouts.forRun('dr-1'))[0]).toMatchObject({ state: 'closed', noticeCommentId: 9 });
      expect(await store.dispatchRequests.get('req-1')).toMatchObject({
        state: 'completed',
        response: '{"fresh":true}',
      });
    });

    it("TR31 leases read the database's clock: a store given none asks the database, and a lease taken now lasts its length from the database's now", async () => {
      const sql = await engine.fresh();
      const before = Date.now();
      const now = await databaseClock(sql);
      // The database runs on this machine here: its clock and this process's agree to within the statement's time.
      expect(Math.abs(now - before)).toBeLessThan(5_000);
      const store = storeOver(sql);
      const leader = await store.leaders.claim('ticks', 'p-a', 60_000);
      expect(leader.leaseUntil - leader.since).toBe(60_000);
      expect(Math.abs(leader.since - now)).toBeLessThan(5_000);
      await store.processes.register({ id: 'p-a', host: 'h', pid: 1, leaseMs: 60_000 });
      expect(await store.processes.alive('p-a')).toBe(true);
    });

    it('TR31 each change of holder raises the epoch, a renewal keeps it, and a release keeps it too, so an old fence never passes again', async () => {
      let db = Date.UTC(2026, 11, 1);
      const l = new LeaderStore(await engine.fresh(), async () => db);
      expect(await l.claim('ticks', 'p-a', 30_000)).toMatchObject({ holder: 'p-a', epoch: 1 });
      db += 10_000;
      expect(await l.claim('ticks', 'p-a', 30_000)).toMatchObject({ holder: 'p-a', epoch: 1 });
      expect(await l.stillLeads('ticks', 'p-a', 1)).toBe(true);
      // p-a stalls past its lease: p-b takes over.
      db += 40_000;
      expect(await l.stillLeads('ticks', 'p-a', 1)).toBe(false);
      expect(await l.claim('ticks', 'p-b', 30_000)).toMatchObject({ holder: 'p-b', epoch: 2 });
      await l.release('ticks', 'p-b');
      // p-a is back and leads again, in a new epoch: its stalled tick's fence (epoch 1) stays shut.
      expect(await l.claim('ticks', 'p-a', 30_000)).toMatchObject({ holder: 'p-a', epoch: 3 });
      expect([
        await l.stillLeads('ticks', 'p-a', 1),
        await l.stillLeads('ticks', 'p-a', 3),
        await l.stillLeads('ticks', 'p-b', 2),
      ]).toEqual([false, true, false]);
    });
  });
}
