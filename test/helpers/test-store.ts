import { inject } from 'vitest';
import { postgresSql } from '../../src/store/postgres-sql.js';
import type { Sql } from '../../src/store/sql.js';
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

export function testStore(): Store {
  if (!template) return openStore(':memory:');
  const name = `t${process.pid}_${++seq}`;
  const ready = (async () => {
    admin ??= postgresSql(template.replace(/\/yoke_template$/, '/postgres'), { max: 1 });
    await admin.exec(`CREATE DATABASE ${name} TEMPLATE yoke_template`);
    return postgresSql(template.replace(/\/yoke_template$/, `/${name}`), { max: 4, idleMs: 100 });
  })();
  return storeOver(lazySql(ready));
}

/** An Sql whose database is still being made: every statement waits for it. */
function lazySql(ready: Promise<Sql>): Sql {
  return {
    dialect: 'postgres',
    all: async (q, p) => (await ready).all(q, p),
    get: async (q, p) => (await ready).get(q, p),
    run: async (q, p) => (await ready).run(q, p),
    exec: async (q) => (await ready).exec(q),
    transaction: async (fn) => (await ready).transaction(fn),
    hold: async (key) => (await ready).hold(key),
    close: async () => (await ready).close(),
  };
}
