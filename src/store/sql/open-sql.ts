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
/** Connection parameters whose values are shown as they are; every other one may hold a secret (`password`, `sslkey`…). */
const SHOWN_PARAMS = new Set([
  'sslmode',
  'application_name',
  'connect_timeout',
  'target_session_attrs',
  'host',
  'port',
  'dbname',
  'user',
]);

/**
 * A database URL as yoke prints it: a PostgreSQL URL with its password and every parameter not known to be
 * harmless shown as `***` (a password holding `@`, an empty user, `?password=` alike); one it cannot read is
 * not shown at all. A SQLite path as it is.
 */
export function printable(target: string): string {
  if (!isPostgresUrl(target)) return target;
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return 'a PostgreSQL URL yoke could not read (not shown: it may hold a password)';
  }
  if (url.password) url.password = '***';
  for (const key of [...url.searchParams.keys()])
    if (!SHOWN_PARAMS.has(key.toLowerCase())) url.searchParams.set(key, '***');
  return url.toString().replace(/%2A%2A%2A/g, '***');
}

/**
 * libpq's `connect_timeout` in a PostgreSQL URL, in ms, read as libpq reads it: whole seconds, 1 counted as 2, 0 or
 * less no bound at all (0); undefined where the URL gives none (or is no URL). Anything else is refused, naming it.
 */
export function urlConnectTimeoutMs(target: string): number | undefined {
  let raw: string | null;
  try {
    raw = new URL(target).searchParams.get('connect_timeout');
  } catch {
    return undefined;
  }
  if (raw === null) return undefined;
  if (!/^\s*-?\d+\s*$/.test(raw))
    throw new Error(
      `The PostgreSQL URL's connect_timeout=${raw} is not a whole number of seconds: write it as libpq reads it (connect_timeout=10), or leave it out for yoke's 10 s.`,
    );
  const seconds = Number(raw);
  return seconds <= 0 ? 0 : Math.max(2, seconds) * 1000;
}

/** Refuses a SQLite file that is not there (a typo would otherwise open a new, empty store); `also` names another way to point at one. */
export function requireSqliteFile(target: string, also = ''): void {
  if (target !== ':memory:' && !existsSync(target))
    throw new Error(
      `There is no SQLite store at ${target}. Name yoke's database file (YOKE_DB_PATH; .yoke/yoke.db by default)${also}.`,
    );
}

export function openSql(target: string, opts: { mustExist?: boolean; migrate?: boolean } = {}): Sql {
  if (isPostgresUrl(target)) {
    const connectTimeoutMs = urlConnectTimeoutMs(target);
    return postgresSql(target, connectTimeoutMs === undefined ? {} : { connectTimeoutMs });
  }
  if (opts.mustExist) requireSqliteFile(target);
  // The embedded store applies its migrations when it opens (openDb); `migrate: false` is for reading a store as it is.
  return sqliteSql(openDb(target, { migrate: opts.migrate !== false }));
}
