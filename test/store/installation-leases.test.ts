import { describe, expect, it } from 'vitest';
import { keepReaders } from '../../src/fleet/engine/readers.js';
import { storeOver, type Store } from '../../src/store/store.js';
import { useEngines } from '../helpers/engines.js';

// SC08 on both engines: an installation's lease, held by one process at a time by the database's clock, and the
// keeper each process runs on its tick. `db` stands in for the database's clock.

const TICK = 2_000;
/** A process's lease, renewed each tick, and an installation's each last two ticks. */
const PROCESS_LEASE = 2 * TICK;
const READ_LEASE = 2 * TICK;

/** A process that reads its share, as a yoke server registers itself. */
async function reader(store: Store, id: string, pid = 1): Promise<void> {
  await store.processes.register({ id, host: 'h', pid, leaseMs: PROCESS_LEASE });
  await store.processes.markReader(id);
}

for (const engine of useEngines()) {
  describe.skipIf(engine.skip)(`installation leases on ${engine.name}`, () => {
    it("SC08 an installation is held by one process at a time: renewed by its holder, taken only once it lapsed or its holder's process is gone", async () => {
      let db = Date.UTC(2026, 11, 6);
      const store = storeOver(await engine.fresh(), undefined, async () => db);
      await store.processes.register({ id: 'p-a', host: 'h1', pid: 1, leaseMs: 60_000 });
      await store.processes.register({ id: 'p-b', host: 'h2', pid: 2, leaseMs: 60_000 });
      expect(await store.installationLeases.claim(7, 'p-a', READ_LEASE)).toBe(true);
      expect(await store.installationLeases.claim(7, 'p-b', READ_LEASE)).toBe(false);
      db += READ_LEASE - 1;
      expect(await store.installationLeases.claim(7, 'p-a', READ_LEASE)).toBe(true);
      db += READ_LEASE - 1;
      expect(await store.installationLeases.claim(7, 'p-b', READ_LEASE)).toBe(false);
      db += 1;
      // p-a let it lapse: p-b takes it, and p-a cannot renew what is p-b's now.
      expect(await store.installationLeases.claim(7, 'p-b', READ_LEASE)).toBe(true);
      expect(await store.installationLeases.claim(7, 'p-a', READ_LEASE)).toBe(false);
      expect((await store.installationLeases.list()).map((l) => [l.installationId, l.holder, l.since])).toEqual([
        [7, 'p-b', db],
      ]);
      // Its holder's process is known dead: taken at once, lease or not.
      await store.processes.end('p-b');
      expect(await store.installationLeases.claim(7, 'p-a', READ_LEASE)).toBe(true);
      // Released, it is anyone's; only its holder can release it.
      await store.installationLeases.release(7, 'p-b');
      expect(await store.installationLeases.heldBy('p-a')).toEqual([7]);
      await store.installationLeases.release(7, 'p-a');
      expect(await store.installationLeases.list()).toEqual([]);
    });

    it('SC08 processes keeping their leases each tick share the installations, never two reading one, and a killed reader’s are read again within two ticks', async () => {
      let db = Date.UTC(2026, 11, 6);
      const store: Store = storeOver(await engine.fresh(), undefined, async () => db);
      const installations = Array.from({ length: 10 }, (_, i) => i + 1);
      const alive = new Set(['p-1', 'p-2', 'p-3']);
      for (const id of alive) await reader(store, id);
      const reads = new Map<string, number[]>();
      /** One tick of every live process, each renewing its process lease and then its reading, in turn. */
      const tick = async () => {
        db += TICK;
        for (const id of alive) {
          await store.processes.renew(id, PROCESS_LEASE);
          reads.set(id, await keepReaders(store, id, installations, READ_LEASE));
        }
        for (const id of [...reads.keys()].filter((p) => !alive.has(p))) reads.delete(id);
      };
      /** No installation is read by two processes at once, and which ones no process reads. */
      const unread = () => {
        const all = [...reads.values()].flat();
        expect(new Set(all).size).toBe(all.length);
        return installations.filter((i) => !all.includes(i));
      };
      await tick();
      await tick();
      expect(unread()).toEqual([]);
      expect([...reads.values()].map((r) => r.length).sort()).toEqual([3, 3, 4]);
      // p-2 is killed: it renews nothing more. Its process lease and its installations' lapse two ticks after its
      // last renewal, and the survivors read them from that tick on, never two at once.
      alive.delete('p-2');
      const orphaned = reads.get('p-2')!;
      const readNow = () => [...reads.values()].flat();
      await tick();
      expect(orphaned.filter((i) => readNow().includes(i))).toEqual([]);
      await tick();
      expect(orphaned.filter((i) => !readNow().includes(i))).toEqual([]);
      // What the survivors hand each other as they rebalance is read again at the tick after.
      unread();
      await tick();
      expect(unread()).toEqual([]);
      expect([...reads.values()].map((r) => r.length).sort()).toEqual([5, 5]);
      // A fourth process joins: within two ticks the reading is spread again, never read twice on the way.
      alive.add('p-4');
      await reader(store, 'p-4', 4);
      for (let i = 0; i < 2; i++) {
        await tick();
        unread();
      }
      expect(unread()).toEqual([]);
      expect([...reads.values()].map((r) => r.length).sort()).toEqual([3, 3, 4]);
    });

    it('SC08 a process gives up at once what a newcomer is to read, and the newcomer takes it at its next tick', async () => {
      let db = Date.UTC(2026, 11, 6);
      const store: Store = storeOver(await engine.fresh(), undefined, async () => db);
      const installations = [1, 2, 3, 4];
      await reader(store, 'p-1');
      expect(await keepReaders(store, 'p-1', installations, READ_LEASE)).toEqual([1, 2, 3, 4]);
      // A process that reads nothing (the database door) is given nothing to read.
      await store.processes.register({ id: 'door', host: 'h', pid: 3, leaseMs: PROCESS_LEASE });
      db += TICK;
      await store.processes.renew('p-1', PROCESS_LEASE);
      expect(await keepReaders(store, 'p-1', installations, READ_LEASE)).toEqual([1, 2, 3, 4]);
      await reader(store, 'p-2', 2);
      db += TICK;
      const kept = await keepReaders(store, 'p-1', installations, READ_LEASE);
      expect(kept).toHaveLength(2);
      expect(await store.installationLeases.heldBy('p-1')).toEqual(kept);
      expect(await keepReaders(store, 'p-2', installations, READ_LEASE)).toEqual(
        installations.filter((i) => !kept.includes(i)),
      );
    });
  });
}
