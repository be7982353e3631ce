import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach } from 'vitest';
import { postgresSql } from '../../src/store/sql/postgres-sql.js';
import { migrateSql } from '../../src/store/sql/schema.js';
import type { Sql } from '../../src/store/sql/sql.js';
import { sqliteSql } from '../../src/store/sql/sqlite-sql.js';
import { havePostgres, usePostgres } from './postgres.js';

// The store's engines for tests that run on both: SQLite and a real
// PostgreSQL (skipped, with a message, where it is not installed). `fresh`
// is a migrated, empty database; `shared` gives connections of separate
// "processes" to one database (two SQLite handles on one file, two pg pools).

export interface TestEngine {
  name: string;
  skip: boolean;
  fresh(): Promise<Sql>;
  /** A database no migration has touched. */
  empty(): Promise<Sql>;
  shared(): Promise<() => Sql>;
}

export function useEngines(): TestEngine[] {
  const pg = usePostgres();
  const dir = mkdtempSync(join(tmpdir(), 'yoke-engines-'));
  const open: Sql[] = [];
  const keep = (s: Sql) => (open.push(s), s);
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close().catch(() => undefined);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let files = 0;
  return [
    {
      name: 'SQLite',
      skip: false,
      fresh: async () => {
        const s = keep(sqliteSql(new Database(':memory:')));
        await migrateSql(s);
        return s;
      },
      empty: async () => keep(sqliteSql(new Database(':memory:'))),
      shared: async () => {
        const path = join(dir, `shared-${++files}.db`);
        await migrateSql(keep(sqliteSql(new Database(path))));
        return () => keep(sqliteSql(new Database(path)));
      },
    },
    {
      name: 'PostgreSQL',
      skip: !havePostgres,
      fresh: async () => {
        const s = keep(postgresSql(await pg.db()));
        await migrateSql(s);
        return s;
      },
      empty: async () => keep(postgresSql(await pg.db())),
      shared: async () => {
        const url = await pg.db();
        await migrateSql(keep(postgresSql(url)));
        return () => keep(postgresSql(url));
      },
    },
  ];
}
