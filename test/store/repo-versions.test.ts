import { describe, expect, it } from 'vitest';
import { storeOver, type Store } from '../../src/store/store.js';
import { useEngines } from '../helpers/engines.js';
import { newRun } from '../helpers/new-run.js';

// SC10 on both engines: the database moves a repository's version on every write to what a pass reads of it from
// the store (its row, runs, claims, AFK labels, asks), in the writing transaction, and moves no other's.

/** Each kind of write the pass's facts come from, to `repo`. */
const WRITES: [string, (s: Store, repo: string) => Promise<unknown>][] = [
  ['its row, created', (s, repo) => s.repos.ensure(repo, 1, 0)],
  ['its row, changed', (s, repo) => s.repos.setAutoLoop(repo, true, 5)],
  ['a run, launched', (s, repo) => s.runs.insert(newRun(`r-${repo}`, 'issue#1', repo))],
  ['a run, ended', (s, repo) => s.runs.end(`r-${repo}`, 'success', null, 9)],
  ['a claim', (s, repo) => s.claims.record({ repo, prNumber: 4, runId: `r-${repo}`, issueNumber: 1, recordedAt: 3 })],
  [
    'an AFK label',
    (s, repo) => s.afkLabels.record({ repo, issueNumber: 1, bodyDigest: 'b', labelledBy: 'maint', recordedAt: 3 }),
  ],
  ['an AFK label, told of an edit', (s, repo) => s.afkLabels.setNotified(repo, 1, 'b2')],
  [
    'an ask',
    (s, repo) =>
      s.asks.record({
        repo,
        kind: 'fix',
        number: 4,
        source: 'review',
        sourceId: 77,
        author: 'maint',
        headSha: 'abc',
        text: 'rename it',
        comments: [],
        askedAt: 3,
        declined: null,
      }),
  ],
];

for (const engine of useEngines()) {
  describe.skipIf(engine.skip)(`repository versions on ${engine.name}`, () => {
    it('SC10 every write to what a pass reads of a repository moves its version, and only its own', async () => {
      const store = storeOver(await engine.fresh());
      await store.repos.ensure('acme/other', 1, 0);
      const other = (await store.repos.versions()).get('acme/other');
      expect(other).toBeTypeOf('number');
      const seen: (number | undefined)[] = [(await store.repos.versions()).get('acme/api')];
      for (const [what, write] of WRITES) {
        await write(store, 'acme/api');
        const versions = await store.repos.versions();
        seen.push(versions.get('acme/api'));
        expect(seen.at(-1), what).not.toBe(seen.at(-2));
        expect(versions.get('acme/other'), what).toBe(other);
      }
      expect(seen[0]).toBeUndefined();
    });
  });
}
