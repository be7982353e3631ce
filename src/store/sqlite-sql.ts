import { AsyncLocalStorage } from 'node:async_hooks';
import type { Db } from './db.js';
import type { Sql, SqlParam } from './sql.js';

// SQLite under the async interface. better-sqlite3 answers at once, on one
// connection; a transaction spans awaits, so every statement from outside it
// queues behind it (else it would run inside the open transaction).

/**
 * Statements run at once while nothing is queued, in call order with the
 * store's other code exactly as before the interface was async; while a
 * transaction is open they wait their turn behind it.
 */
class Queue {
  private pending = 0;
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(fn: () => Promise<T> | T): Promise<T> {
    if (this.pending === 0) {
      let out: Promise<T> | T;
      try {
        out = fn();
      } catch (err) {
        return Promise.reject(err);
      }
      if (!(out instanceof Promise)) return Promise.resolve(out);
      return this.hold(out);
    }
    return this.hold(this.tail.then(fn, fn));
  }

  private hold<T>(p: Promise<T>): Promise<T> {
    this.pending++;
    const settled = p.finally(() => this.pending--);
    this.tail = settled.catch(() => undefined);
    return settled;
  }
}

/** The statements themselves, answered at once (better-sqlite3 is synchronous). */
function direct(db: Db) {
  return {
    all: <T>(sql: string, params: readonly SqlParam[] = []) => db.prepare(sql).all(...params) as T[],
    get: <T>(sql: string, params: readonly SqlParam[] = []) => db.prepare(sql).get(...params) as T | undefined,
    run: (sql: string, params: readonly SqlParam[] = []) => ({ changes: db.prepare(sql).run(...params).changes }),
    exec: (sql: string) => void db.exec(sql),
  };
}

export function sqliteSql(db: Db): Sql {
  const queue = new Queue();
  const d = direct(db);
  // Code running inside a transaction (however deep, across awaits) reaches
  // it directly: its statements join the transaction instead of queueing
  // behind it, which would wait forever.
  const inTx = new AsyncLocalStorage<true>();
  const now = <T>(fn: () => T): Promise<T> => {
    try {
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(err);
    }
  };
  const run = <T>(fn: () => T): Promise<T> => (inTx.getStore() ? now(fn) : queue.run(fn));
  const tx: Sql = {
    dialect: 'sqlite',
    all: async (sql, params) => d.all(sql, params),
    get: async (sql, params) => d.get(sql, params),
    run: async (sql, params) => d.run(sql, params),
    exec: async (sql) => d.exec(sql),
    transaction: (fn) => fn(tx), // already inside one: the outer transaction holds
    close: async () => {},
  };
  return {
    dialect: 'sqlite',
    all: (sql, params) => run(() => d.all(sql, params)),
    get: (sql, params) => run(() => d.get(sql, params)),
    run: (sql, params) => run(() => d.run(sql, params)),
    exec: (sql) => run(() => d.exec(sql)),
    transaction: (fn) =>
      inTx.getStore()
        ? fn(tx) // already inside one: the outer transaction holds
        : queue.run(() => inTx.run(true, async () => {
        // IMMEDIATE: the write lock is taken at the start, so another process's writer waits (busy_timeout) rather than failing mid-way.
        db.exec('BEGIN IMMEDIATE');
        try {
          const out = await fn(tx);
          db.exec('COMMIT');
          return out;
        } catch (err) {
          if (db.inTransaction) db.exec('ROLLBACK');
          throw err;
        }
      })),
    close: async () => void db.close(),
  };
}
