import { describe, expect, it } from 'vitest';
import { serialRun } from '../../../src/delivery/runs/run-lock.js';
import { postgresSql } from '../../../src/store/sql/postgres-sql.js';
import { havePostgres, usePostgres } from '../../helpers/postgres.js';

const pgServer = usePostgres();

describe('one gate check of a run at a time', () => {
  it('runs the checks of one run one after another, even when one fails, and other runs alongside', async () => {
    const store = { sql: { hold: async () => async () => {} } };
    const log: string[] = [];
    const step =
      (name: string, ms: number, fail = false) =>
      async () => {
        log.push(`${name} start`);
        await new Promise((r) => setTimeout(r, ms));
        log.push(`${name} end`);
        if (fail) throw new Error(name);
        return name;
      };
    const a = serialRun(store, 'dr-1', step('a', 20, true));
    const b = serialRun(store, 'dr-1', step('b', 1));
    const c = serialRun(store, 'dr-2', step('c', 1));
    await expect(a).rejects.toThrow('a');
    expect(await b).toBe('b');
    expect(await c).toBe('c');
    expect(log).toEqual(['a start', 'c start', 'c end', 'a end', 'b start', 'b end']);
  });
});

describe.skipIf(!havePostgres)('one gate check of a run at a time, across processes', () => {
  it("DX01 two yoke processes on one PostgreSQL run one run's gate checks one after another", async () => {
    const url = await pgServer.db();
    // Two processes: each its own pool and its own lock connections.
    const [a, b] = [{ sql: postgresSql(url) }, { sql: postgresSql(url) }];
    try {
      const log: string[] = [];
      const step = (name: string, ms: number) => async () => {
        log.push(`${name} start`);
        await new Promise((r) => setTimeout(r, ms));
        log.push(`${name} end`);
      };
      const first = serialRun(a, 'dr-1', step('a closes APP-3', 300));
      // b asks once a holds the run (its lock taken, its close-out begun).
      while (!log.length) await new Promise((r) => setTimeout(r, 5));
      const second = serialRun(b, 'dr-1', step('b sweeps APP-4', 1));
      await Promise.all([first, second]);
      expect(log).toEqual(['a closes APP-3 start', 'a closes APP-3 end', 'b sweeps APP-4 start', 'b sweeps APP-4 end']);
    } finally {
      await a.sql.close();
      await b.sql.close();
    }
  });
});
