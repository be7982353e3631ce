import { describe, expect, it } from 'vitest';
import { httpsTransport } from '../../src/cli/driver-transport.js';
import { DEFAULT_DRIVER_POLICY, Driver, type DriverEvent } from '../../src/cli/watch-deploy.js';
import { createDeploymentRun } from '../../src/delivery/runs/deployment-runs.js';
import { postgresSql } from '../../src/store/sql/postgres-sql.js';
import { openStoreAt } from '../../src/store/store.js';
import { startApi } from '../helpers/api-server.js';
import { REPO, makeDeliveryHarness } from '../helpers/delivery.js';
import { havePostgres, usePostgres } from '../helpers/postgres.js';

// DX12/DX14 on PostgreSQL: its own contention, met for real. Another
// connection holds the lock every write transaction takes first; yoke's
// dispatch waits for it until PostgreSQL's lock_timeout (55P03,
// lock_not_available) or statement_timeout (57014, query_canceled) ends the
// wait. The answer is busy, by the source document's names, and the driver
// sends the same request again on the shared schedule until the lock is free.

const QA_ONLY = { delivery: { stages: [{ name: 'qa', kind: 'qa' }] } };
const WRITE_LOCK = 7_079_000; // the lock postgres-sql.ts takes in every write transaction
const pg = usePostgres();

for (const [code, timeouts] of [
  ['lock_timeout', { lockTimeoutMs: 50 }],
  ['statement_cancelled', { statementTimeoutMs: 150 }],
] as const) {
  describe.skipIf(!havePostgres)(`the driver against PostgreSQL's ${code}`, () => {
    it(`DX12 a real ${timeouts.lockTimeoutMs ? 'lock_timeout (55P03)' : 'statement_timeout (57014)'} is answered ${code} and retried, same request id, after 15 then 30 seconds, until the lock is free`, async () => {
      const url = await pg.db();
      const store = await openStoreAt(url, { postgres: timeouts });
      const h = await makeDeliveryHarness({ config: QA_ONLY, store });
      await h.attach(1, 'checkout');
      const run = await createDeploymentRun(h.fleet, { repo: REPO });
      if (!run.ok) throw new Error(run.refusal.message);
      const api = await startApi(h, { tokens: ['op-token'] });
      // Another process's long write: it holds the write lock while the driver's gate checks arrive.
      const other = postgresSql(url, { max: 1 });
      const release = await other.hold(WRITE_LOCK);
      const slept: number[] = [];
      const events: DriverEvent[] = [];
      const requests: string[] = [];
      const seen: typeof fetch = async (input, init) => {
        const u = String(input);
        if (init?.method === 'POST' && u.endsWith('/dispatch'))
          requests.push(new Headers(init.headers).get('idempotency-key') ?? '?');
        return fetch(input, init);
      };
      const d = new Driver({
        transport: httpsTransport(
          { out: () => {}, err: () => {}, env: {}, fetch: seen },
          { url: api.url, token: 'op-token' },
          5_000,
        ),
        policy: DEFAULT_DRIVER_POLICY,
        sleep: async (ms) => {
          slept.push(ms);
          if (slept.length === 2) await release(); // the other write ends between the second and third try
        },
        exec: async () => ({ code: 0, output: '' }),
        emit: (e) => events.push(e),
        driverId: 'ci-7',
      });
      try {
        const answer = await d.gateCheck(run.value.id, 'qa', run.value.commit);
        expect(answer.state).toBe('waiting');
        expect(slept).toEqual([15_000, 30_000]);
        expect(events.flatMap((e) => (e.event === 'retry' ? [e.code] : []))).toEqual([code, code]);
        expect(requests).toHaveLength(3);
        expect(new Set(requests).size).toBe(1);
        // Nothing was left reserved by the refused tries; the third one ran and recorded its answer.
        expect(await store.dispatchRequests.get(requests[0]!)).toMatchObject({ state: 'completed', attempts: 1 });
      } finally {
        await release();
        await other.close();
        await api.close();
        await store.close();
      }
    });
  });
}
