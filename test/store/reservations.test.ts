import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { recordLaunch } from '../../src/fleet/runs/launch.js';
import { openStore, openStoreAt, type Store } from '../../src/store/store.js';
import { migrateSql } from '../../src/store/sql/schema.js';
import { havePostgres, usePostgres } from '../helpers/postgres.js';
import { newWorkCandidate } from '../helpers/candidates.js';

// BU01, BU02 in the store: the locked launch reserves a run's limit only while every budget it names stays
// within its limit, counted under the same lock as the cap. Twenty launches at once, each from its own
// connection (as from twenty yoke processes), on one SQLite file and on one PostgreSQL: exactly as many as
// the budget covers are recorded, never more.

const pg = usePostgres();
const dir = mkdtempSync(join(tmpdir(), 'yoke-reserve-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DAY = Date.UTC(2026, 10, 30);
const launcher = { name: 'command', usesSecret: () => false } as never;
const budget = {
  repo: 'acme/api',
  period: 'day',
  since: DAY,
  until: DAY + 86_400_000,
  newWork: false,
  setting: 'x',
} as const;

/** One launch of new work reserving $2 against a $5 daily budget of acme/api, from its own store. */
const launch = (store: Store, i: number) =>
  recordLaunch(
    { store, launcher, clock: { now: () => DAY + 3_600_000 + i }, newRunId: () => `run-${i}` },
    newWorkCandidate('acme/api', i),
    100,
    { money: { reserve: 2, budgets: [{ ...budget, limitUsd: 5 }] } },
  );

async function race(
  open: () => Promise<Store>,
  together: boolean,
): Promise<{ kinds: string[]; held: number; store: Store }> {
  const stores = await Promise.all(Array.from({ length: 20 }, open));
  // SQLite's connections in one process take its write lock one at a time (better-sqlite3 waits synchronously:
  // cross-process.test.ts races processes); PostgreSQL's race for real.
  const results = together
    ? await Promise.all(stores.map((s, i) => launch(s, i)))
    : await stores.reduce<Promise<Awaited<ReturnType<typeof launch>>[]>>(
        async (done, s, i) => [...(await done), await launch(s, i)],
        Promise.resolve([]),
      );
  for (const s of stores.slice(1)) await s.close();
  const store = stores[0]!;
  const held = await store.spend.charged({ repo: 'acme/api', since: DAY, newWork: false });
  return { kinds: results.map((r) => r.kind), held, store };
}

describe('BU01 BU02 the locked launch reserves money', () => {
  it('BU01 BU02 on one SQLite file, twenty launches from their own connections: two of $2 fit a $5 budget, the rest are told why', async () => {
    const file = join(dir, 'shared.db');
    await openStore(file).close();
    const { kinds, held, store } = await race(async () => openStore(file), false);
    expect(kinds.filter((k) => k === 'recorded')).toHaveLength(2);
    expect(kinds.filter((k) => k === 'over_budget')).toHaveLength(18);
    expect(held).toBe(4);
    // A run that never started gives its $2 back, and one more fits.
    const first = (await store.runs.listLive())[0]!;
    await store.spend.release(first.id);
    expect(await store.spend.charged({ repo: 'acme/api', since: DAY, newWork: false })).toBe(2);
    expect((await launch(store, 99)).kind).toBe('recorded');
    // A run that reported costs what it reported: $0.25 of its $2.
    await store.runs.recordReport(
      'run-99',
      { outcome: 'success', verdict: null, summary: null, cost: { usd: 0.25, inputTokens: 1, outputTokens: 1 } },
      DAY + 7_200_000,
    );
    expect(await store.spend.charged({ repo: 'acme/api', since: DAY, newWork: false })).toBe(2.25);
    await store.close();
  });

  it.skipIf(!havePostgres)(
    'BU01 on one PostgreSQL, twenty launches at once from their own connections: two of $2 fit a $5 budget',
    async () => {
      const url = await pg.db();
      const first = await openStoreAt(url);
      await migrateSql(first.sql);
      await first.close();
      const { kinds, held, store } = await race(() => openStoreAt(url), true);
      expect(kinds.filter((k) => k === 'recorded')).toHaveLength(2);
      expect(held).toBe(4);
      await store.close();
    },
    60_000,
  );
});
