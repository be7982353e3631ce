import type { Db } from './db.js';
import type { Sql, SqlParam } from './sql.js';

// SQLite under the async interface. better-sqlite3 answers at once, on one
// connection; a transaction spans awaits, so every statement from outside it
// queues behind it (else it would run inside the open transaction).

class Queue {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T> | T): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

function bound(db: Db): Omit<Sql, 'transaction' | 'close'> {
  return {
    dialect: 'sqlite',
    all: async <T>(sql: string, params: readonly SqlParam[] = []) => db.prepare(sql).all(...params) as T[],
    get: async <T>(sql: string, params: readonly SqlParam[] = []) => db.prepare(sql).get(...params) as T | undefined,
    run: async (sql: string, params: readonly SqlParam[] = []) => ({ changes: db.prepare(sql).run(...params).changes }),
    exec: async (sql: string) => void db.exec(sql),
  };
}

export function sqliteSql(db: Db): Sql {
  const queue = new Queue();
  const inside = bound(db);
  const tx: Sql = {
    ...inside,
    transaction: (fn) => fn(tx), // already inside one: the outer transaction holds
    close: async () => {},
  };
  return {
    dialect: 'sqlite',
    all: (sql, params) => queue.run(() => inside.all(sql, params)),
    get: (sql, params) => queue.run(() => inside.get(sql, params)),
    run: (sql, params) => queue.run(() => inside.run(sql, params)),
    exec: (sql) => queue.run(() => inside.exec(sql)),
    transaction: (fn) =>
      queue.run(async () => {
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
      }),
    close: async () => void db.close(),
  };
}
