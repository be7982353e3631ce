import type { Statement } from 'better-sqlite3';
import type { Db } from './db.js';
import { decodeRow, type Shape } from './columns.js';
import type { Sql, SqlParam } from './sql.js';

// SQLite under the async interface. better-sqlite3 answers at once, on one
// connection; a transaction spans awaits, so every statement from outside it
// queues behind it (else it would run inside the open transaction). Code
// inside a transaction goes through the `tx` it is given. A transaction only
// ever waits on its own statements, which answer within the same turn: one
// still open when the turn ends is waiting on something else (a statement
// through the outer handle, which would wait for it forever, or I/O), and is
// rolled back with an error that says so.

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

/** A transaction that waited past the end of its turn: see the module comment. */
export class StuckTransaction extends Error {
  constructor() {
    super(
      "A store transaction waited on something other than its own statements (a statement through the outer store instead of the transaction's, or I/O) and was rolled back. Inside store.write, use the store it hands you, and do no I/O.",
    );
  }
}

/** The statements themselves, answered at once (better-sqlite3 is synchronous); each is prepared once and kept. */
function direct(db: Db) {
  const prepared = new Map<string, Statement>();
  const statement = (sql: string): Statement => {
    let st = prepared.get(sql);
    if (!st) prepared.set(sql, (st = db.prepare(sql)));
    return st;
  };
  return {
    all: <S extends Shape>(shape: S, sql: string, params: readonly SqlParam[] = []) =>
      statement(sql)
        .all(...params)
        .map((row) => decodeRow(shape, row as Record<string, unknown>, sql)),
    get: <S extends Shape>(shape: S, sql: string, params: readonly SqlParam[] = []) => {
      const row = statement(sql).get(...params);
      return row === undefined ? undefined : decodeRow(shape, row as Record<string, unknown>, sql);
    },
    run: (sql: string, params: readonly SqlParam[] = []) => ({ changes: statement(sql).run(...params).changes }),
    exec: (sql: string) => void db.exec(sql),
  };
}

export function sqliteSql(db: Db): Sql {
  const queue = new Queue();
  const d = direct(db);
  // Prepared once: a launch is one short transaction, and parsing BEGIN each time shows in the figures.
  const [begin, commit, rollback] = ['BEGIN IMMEDIATE', 'COMMIT', 'ROLLBACK'].map((q) => db.prepare(q)) as [
    Statement,
    Statement,
    Statement,
  ];
  // The open transaction's way to fail, and one check at the end of the turn for whichever is open then.
  let open: ((err: Error) => void) | null = null;
  let armed = false;
  const watch = (fail: (err: Error) => void) => {
    open = fail;
    if (armed) return;
    armed = true;
    setImmediate(() => {
      armed = false;
      if (open === fail) fail(new StuckTransaction());
      else if (open) watch(open);
    });
  };
  const tx: Sql = {
    dialect: 'sqlite',
    all: async (shape, sql, params) => d.all(shape, sql, params),
    get: async (shape, sql, params) => d.get(shape, sql, params),
    run: async (sql, params) => d.run(sql, params),
    exec: async (sql) => d.exec(sql),
    transaction: (fn) => fn(tx), // already inside one: the outer transaction holds
    hold: async () => async () => {},
    close: async () => {},
  };
  return {
    dialect: 'sqlite',
    all: (shape, sql, params) => queue.run(() => d.all(shape, sql, params)),
    get: (shape, sql, params) => queue.run(() => d.get(shape, sql, params)),
    run: (sql, params) => queue.run(() => d.run(sql, params)),
    exec: (sql) => queue.run(() => d.exec(sql)),
    transaction: <T>(fn: (tx: Sql) => Promise<T>) =>
      queue.run(async () => {
        // IMMEDIATE: the write lock is taken at the start, so another process's writer waits (busy_timeout) rather than failing mid-way.
        begin.run();
        try {
          const out = await new Promise<T>((resolve, reject) => {
            watch(reject);
            fn(tx).then(resolve, reject);
          });
          commit.run();
          return out;
        } catch (err) {
          if (db.inTransaction) rollback.run();
          throw err;
        } finally {
          open = null;
        }
      }),
    hold: async () => async () => {},
    close: async () => void db.close(),
  };
}
