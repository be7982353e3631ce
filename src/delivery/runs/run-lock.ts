import { runLockKey, type Sql } from '../../store/sql/sql.js';

// One gate check or sweep of a deployment run at a time: two interleaved would
// both see a notice missing and both post it, or close members out of order
// (DX01). In this process they queue on a chain; across processes sharing a
// PostgreSQL, each also holds the run's advisory lock while it runs.

const chains = new WeakMap<object, Map<string, Promise<unknown>>>();

/** Runs fn after every earlier fn of the same run (keyed per store, so separate stores never wait on each other). */
export function serialRun<T>(store: { sql: Pick<Sql, 'hold'> }, runId: string, fn: () => Promise<T>): Promise<T> {
  let byRun = chains.get(store);
  if (!byRun) chains.set(store, (byRun = new Map()));
  const before = byRun.get(runId) ?? Promise.resolve();
  const locked = async () => {
    const release = await store.sql.hold(runLockKey(runId));
    try {
      return await fn();
    } finally {
      await release();
    }
  };
  const next = before.then(locked, locked);
  const settled = next.catch(() => undefined);
  byRun.set(runId, settled);
  void settled.then(() => {
    if (byRun.get(runId) === settled) byRun.delete(runId);
  });
  return next;
}
