import { describe, expect, it } from 'vitest';
import { storeOver, type Store } from '../../src/store/store.js';
import { useEngines } from '../helpers/engines.js';

// The counts the metrics read from the store, on both engines: lander verdicts, the heads whose reject a later
// accept reversed (LD06), and merges by how they ended.

const lander = (id: string, head: string, launchedAt: number) => ({
  id,
  repo: 'acme/api',
  kind: 'lander' as const,
  subject: `pr#7@${id}`,
  issueNumber: 1,
  prNumber: 7,
  headSha: head,
  launchedAt,
  budgetDeadline: launchedAt + 1000,
  launcher: 'command',
  launcherRef: null,
  secretHash: null,
  capAtLaunch: 2,
  liveAtLaunch: 1,
});

for (const engine of useEngines()) {
  describe.skipIf(engine.skip)(`the metrics' counts on ${engine.name}`, () => {
    const open = async (): Promise<Store> => storeOver(await engine.fresh());
    const judged = async (store: Store, id: string, head: string, at: number, verdict: 'accept' | 'reject') => {
      await store.runs.insert(lander(id, head, at));
      await store.runs.recordReport(id, { outcome: 'success', verdict, summary: null }, at + 1);
    };

    it("count the landers' verdicts, and a head as flaky only when an accept came after its reject", async () => {
      const store = await open();
      await judged(store, 'a1', 'aaa', 10, 'reject');
      await judged(store, 'a2', 'aaa', 20, 'accept'); // flaky: rejected, then accepted
      await judged(store, 'b1', 'bbb', 30, 'accept');
      await judged(store, 'b2', 'bbb', 40, 'reject'); // not flaky: the reject came last
      await judged(store, 'c1', 'ccc', 50, 'reject');
      expect(await store.figures.landerVerdicts()).toEqual([
        { verdict: 'accept', n: 2 },
        { verdict: 'reject', n: 3 },
      ]);
      expect(await store.figures.flakyHeads()).toBe(1);
    });

    it('count the merges by how they ended', async () => {
      const store = await open();
      const merge = (pr: number, state: 'merged' | 'refused') =>
        store.merges.record({
          repo: 'acme/api',
          prNumber: pr,
          headSha: `h${pr}`,
          state,
          detail: state === 'refused' ? 'GitHub refused' : null,
          at: pr,
          runId: `r${pr}`,
          baseSha: 'base',
          mergeSha: state === 'merged' ? `m${pr}` : null,
        });
      await merge(1, 'merged');
      await merge(2, 'refused');
      await merge(3, 'merged');
      expect(await store.figures.merges()).toEqual([
        { state: 'merged', n: 2 },
        { state: 'refused', n: 1 },
      ]);
    });
  });
}
