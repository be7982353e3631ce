import { inject } from 'vitest';
import { postgresSql } from '../../src/store/sql/postgres-sql.js';
import type { LeaseClock, Sql } from '../../src/store/sql/sql.js';
import { openStore, storeOver, type Store } from '../../src/store/store.js';

// The store a test harness runs on: SQLite's :memory: by default, or, with
// YOKE_TEST_ENGINE=postgres (see postgres-global.ts), a PostgreSQL database of
// its own, copied from the migrated template. The harnesses are built
// synchronously, so the database is made on the store's first statement.

// Outside a vitest worker (a child process a test spawns) there is nothing to inject: SQLite.
const template = ((): string | null => {
  try {
    return inject('postgresTemplate');
  } catch {
    return null;
  }
})();
let admin: Sql | null = null;
let seq = 0;

export const testEngine = template ? 'PostgreSQL' : 'SQLite';

/** `clock`, when given, stands in for the database's clock that leases read (a test's fake time). */
export function testStore(clock?: { now(): number }): Store {
  const leaseClock: LeaseClock | undefined = clock ? async () => clock.now() : undefined;
  if (!template) return openStore(':memory:', { leaseClock });
  const name = `t${process.pid}_${++seq}`;
  const ready = (async () => {
    admin ??= postgresSql(template.replace(/\/yoke_template$/, '/postgres'), { max: 1 });
    await admin.exec(`CREATE DATABASE ${name} TEMPLATE yoke_template`);
    return postgresSql(template.replace(/\/yoke_template$/, `/${name}`), { max: 4, idleMs: 100 });
  })();
  return storeOver(lazySql(ready), undefined, leaseClock);
}

/**
 * An Sql whose database is still being made: every statement waits for it,
 * and those sent meanwhile run one after another in the order they were sent
 * (the harness registers its process lease first, without waiting), until
 * they have all run.
 */
function lazySql(ready: Promise<Sql>): Sql {
  let tail: Promise<unknown> = ready;
  let queued = 0;
  const inOrder = <T>(fn: (sql: Sql) => Promise<T>): Promise<T> => {
    queued++;
    const next = tail.then(async () => fn(await ready));
    tail = next.catch(() => undefined).finally(() => queued--);
    return next;
  };
  let direct: Sql | null = null;
  void ready.then(
    (sql) => (direct = sql),
    () => undefined,
  );
  const run = <T>(fn: (sql: Sql) => Promise<T>): Promise<T> => (direct && queued === 0 ? fn(direct) : inOrder(fn));
  return {
    dialect: 'postgres',
    all: (shape, q, p) => run((s) => s.all(shape, q, p)),
    get: (shape, q, p) => run((s) => s.get(shape, q, p)),
    run: (q, p) => run((s) => s.run(q, p)),
    exec: (q) => run((s) => s.exec(q)),
    transaction: (fn) => run((s) => s.transaction(fn)),
    hold: (key) => run((s) => s.hold(key)),
    close: () => run((s) => s.close()),
  };
}
