import { describe, expect, it } from 'vitest';
import { ProcessStore } from '../../src/store/processes.js';
import { useEngines } from '../helpers/engines.js';

// TR12's process leases, on both engines.

for (const engine of useEngines()) {
  describe.skipIf(engine.skip)(`process leases on ${engine.name}`, () => {
    it('TR12 a process is alive while its lease lasts and renews it; an ended lease is not renewed, and lapsed ones are pruned', async () => {
      const p = new ProcessStore(await engine.fresh());
      const at = Date.UTC(2026, 11, 1);
      await p.register({ id: 'p-a', host: 'h1', pid: 10, at, leaseMs: 30_000 });
      await p.register({ id: 'p-b', host: 'h2', pid: 11, at: at + 1, leaseMs: 30_000 });
      expect(await p.alive('p-a', at + 29_999)).toBe(true);
      expect(await p.alive('p-a', at + 30_000)).toBe(false);
      expect(await p.renew('p-a', at + 20_000, 30_000)).toBe(true);
      expect(await p.alive('p-a', at + 49_999)).toBe(true);
      expect((await p.living(at + 40_000)).map((x) => [x.id, x.host, x.pid, x.aliveUntil])).toEqual([['p-a', 'h1', 10, at + 50_000]]);
      await p.end('p-a');
      expect(await p.renew('p-a', at + 41_000, 30_000)).toBe(false);
      expect(await p.alive('p-a', at + 41_000)).toBe(false);
      expect(await p.prune(at + 40_000)).toBe(2);
      expect(await p.living(0)).toEqual([]);
    });
  });
}
