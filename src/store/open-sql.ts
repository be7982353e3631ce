import { existsSync } from 'node:fs';
import { openDb } from './db.js';
import { postgresSql } from './postgres-sql.js';
import type { Sql } from './sql.js';
import { sqliteSql } from './sqlite-sql.js';

// Which engine a database names: a postgres:// URL is PostgreSQL, anything
// else a SQLite file. Opening a SQLite file this way creates and migrates it
// unless it must already be there.

export const isPostgresUrl = (target: string): boolean => /^postgres(ql)?:\/\//i.test(target);

/** Where yoke keeps its store by default: YOKE_DATABASE_URL (PostgreSQL), else YOKE_DB_PATH, else .yoke/yoke.db. */
export const defaultDatabase = (env: Record<string, string | undefined>): string =>
  env.YOKE_DATABASE_URL || env.YOKE_DB_PATH || '.yoke/yoke.db';

/** A URL as it may be printed: without its password. */
export const printable = (target: string): string =>
  isPostgresUrl(target) ? target.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@') : target;

/** Refuses a SQLite file that is not there (a typo would otherwise open a new, empty store); `also` names another way to point at one. */
export function requireSqliteFile(target: string, also = ''): void {
  if (target !== ':memory:' && !existsSync(target))
    throw new Error(
      `There is no SQLite store at ${target}. Name yoke's database file (YOKE_DB_PATH; .yoke/yoke.db by default)${also}.`,
    );
}

export function openSql(target: string, opts: { mustExist?: boolean; migrate?: boolean } = {}): Sql {
  if (isPostgresUrl(target)) return postgresSql(target);
  if (opts.mustExist) requireSqliteFile(target);
  // The embedded store applies its migrations when it opens (openDb); `migrate: false` is for reading a store as it is.
  return sqliteSql(openDb(target, { migrate: opts.migrate !== false }));
}
