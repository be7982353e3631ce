import { describe, expect, it } from 'vitest';
import { listingKey, viewKey, type SharedRead } from '../../src/store/shared-reads.js';
import { storeOver } from '../../src/store/store.js';
import { useEngines } from '../helpers/engines.js';

// SC08/SC09/SC10 on both engines: what a reader shares is kept only while it holds the installation's lease, a pass asks for
// digests and then the bodies of what changed, and a webhook elsewhere marks a view wanted until it is read again.

const LEASE = 4_000;

const read = (over: Partial<SharedRead> = {}): SharedRead => ({
  key: viewKey('Acme/Widgets'),
  installationId: 7,
  body: '{"shape":1}',
  digest: 'd1',
  readBy: 'p-a',
  readAt: 1,
  ...over,
});

for (const engine of useEngines()) {
  describe.skipIf(engine.skip)(`shared reads on ${engine.name}`, () => {
    it("SC08 keeps a reader's view only while it holds the installation: a process that lost it mid-read cannot write over its successor", async () => {
      let db = Date.UTC(2026, 11, 7);
      const store = storeOver(await engine.fresh(), undefined, async () => db);
      for (const id of ['p-a', 'p-b']) await store.processes.register({ id, host: 'h', pid: 1, leaseMs: 60_000 });
      // Nobody holds installation 7: nothing is kept, whoever says they read it.
      expect(await store.sharedReads.put(read())).toBe(false);
      expect(await store.sharedReads.digests([7])).toEqual(new Map());
      expect(await store.installationLeases.claim(7, 'p-a', LEASE)).toBe(true);
      expect(await store.sharedReads.put(read())).toBe(true);
      // Another process, without the lease, is refused.
      expect(await store.sharedReads.put(read({ readBy: 'p-b', digest: 'forged', body: '{}' }))).toBe(false);
      // p-a's lease lapses and p-b takes it: p-a's late write is refused, p-b's is kept.
      db += LEASE;
      expect(await store.installationLeases.claim(7, 'p-b', LEASE)).toBe(true);
      expect(await store.sharedReads.put(read({ digest: 'late' }))).toBe(false);
      expect(await store.sharedReads.put(read({ readBy: 'p-b', digest: 'd2', readAt: 2 }))).toBe(true);
      const kept = await store.sharedReads.get([viewKey('acme/widgets'), viewKey('nobody/else')]);
      expect([...kept.values()]).toEqual([read({ key: 'view:acme/widgets', readBy: 'p-b', digest: 'd2', readAt: 2 })]);
    });

    it('SC08 gives the digests of the installations asked for, however many, and the bodies asked for', async () => {
      const db = Date.UTC(2026, 11, 7);
      const store = storeOver(await engine.fresh(), undefined, async () => db);
      await store.processes.register({ id: 'p-a', host: 'h', pid: 1, leaseMs: 60_000 });
      for (const inst of [1, 2, 3]) await store.installationLeases.claim(inst, 'p-a', LEASE);
      for (const inst of [1, 2, 3]) {
        await store.sharedReads.put(read({ key: listingKey(inst), installationId: inst, digest: `l${inst}` }));
        await store.sharedReads.put(read({ key: viewKey(`o/r${inst}`), installationId: inst, digest: `v${inst}` }));
      }
      // 600 installations asked for at once.
      const asked = [1, 3, ...Array.from({ length: 600 }, (_, i) => 1000 + i)];
      expect(await store.sharedReads.digests(asked)).toEqual(
        new Map([
          ['listing:1', 'l1'],
          ['view:o/r1', 'v1'],
          ['listing:3', 'l3'],
          ['view:o/r3', 'v3'],
        ]),
      );
      expect([...(await store.sharedReads.get(['view:o/r2', 'view:none'])).keys()]).toEqual(['view:o/r2']);
    });

    it('SC10 reads a kind of fact of 1,200 repositories grouped by repository in one statement, the same as one by one', async () => {
      const sql = await engine.fresh();
      const store = storeOver(sql);
      const names = Array.from({ length: 1_200 }, (_, i) => `org/r${String(i).padStart(4, '0')}`);
      for (const [i, repo] of names.entries())
        for (const issueNumber of i % 2 ? [1, 2] : [1])
          await store.afkLabels.record({ repo, issueNumber, bodyDigest: `d${i}`, labelledBy: null, recordedAt: i });
      // Each statement the store sends from here on, counted: a list of any length is one parameter.
      const sent: string[] = [];
      const all = sql.all.bind(sql);
      sql.all = (shape, text, params) => (sent.push(text), all(shape, text, params));
      const grouped = await store.afkLabels.listForRepos([...names, 'org/none', names[0]!, "o'quote/r"]);
      expect(sent).toHaveLength(1);
      expect(grouped.size).toBe(1_200);
      for (const repo of [names[0]!, names[499]!, names[500]!, names[1_199]!])
        expect(grouped.get(repo)).toEqual(await store.afkLabels.listForRepo(repo));
      expect(grouped.get('org/none')).toBeUndefined();
      expect(await store.afkLabels.listForRepos([])).toEqual(new Map());
      // A list of numbers (installations) is compared as numbers on both engines.
      await store.processes.register({ id: 'p-a', host: 'h', pid: 1, leaseMs: 60_000 });
      await store.installationLeases.claim(1_500, 'p-a', LEASE);
      await store.sharedReads.put(read({ key: listingKey(1_500), installationId: 1_500 }));
      sent.length = 0;
      const ids = Array.from({ length: 2_000 }, (_, i) => i);
      expect(await store.sharedReads.digests(ids)).toEqual(new Map([['listing:1500', 'd1']]));
      expect(sent).toHaveLength(1);
    });

    it('SC08 a view wanted by a webhook elsewhere stays wanted until its reader shares it again', async () => {
      const db = Date.UTC(2026, 11, 7);
      const store = storeOver(await engine.fresh(), undefined, async () => db);
      await store.processes.register({ id: 'p-a', host: 'h', pid: 1, leaseMs: 60_000 });
      await store.installationLeases.claim(7, 'p-a', LEASE);
      await store.sharedReads.put(read());
      // Wanting a view never shared changes nothing.
      await store.sharedReads.want(viewKey('acme/none'));
      await store.sharedReads.want(viewKey('ACME/widgets'));
      expect(await store.sharedReads.wanted([7])).toEqual(['view:acme/widgets']);
      expect(await store.sharedReads.wanted([8])).toEqual([]);
      expect(await store.sharedReads.wanted([])).toEqual([]);
      await store.sharedReads.put(read({ digest: 'd1' }));
      expect(await store.sharedReads.wanted([7])).toEqual([]);
    });
  });
}
