import { createRequire } from 'node:module';
import type pg from 'pg';
import { decodeRow, type Shape } from './columns.js';
import { numberPlaceholders, type Sql, type SqlParam } from './sql.js';

// PostgreSQL under the async interface, through a pg pool. A transaction has
// a connection of its own for its whole life, reached through the `tx` it
// hands its code; everything else takes any connection.
//
// Every write transaction first takes one transaction-scoped advisory lock,
// as SQLite's BEGIN IMMEDIATE takes its write lock: write transactions run one
// at a time across every process on the database. The store's transactions
// read, then write what they read (the locked launch re-counts live runs
// before it records one, SP06; a check-in reads the lease it replaces), and
// this is what keeps those reads true until the commit, on either engine.

const INT8 = 20;

/** pg, loaded when yoke first opens PostgreSQL: on SQLite, and in CLI commands that open no store, it is never loaded. */
let pgModule: typeof pg | undefined;
const loadPg = (): typeof pg => (pgModule ??= createRequire(import.meta.url)('pg'));

/** The one lock every write transaction takes first (see above). */
const WRITE_LOCK = 7_079_000;

/** 64-bit whole numbers (milliseconds, counts) come back as numbers, as SQLite gives them: every value yoke keeps is far below 2^53. */
const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === INT8 ? (v: string) => Number(v) : loadPg().types.getTypeParser(oid, format),
};

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** Each statement's text, numbered once, under a name of its own: each connection parses and plans it once, then only binds it. */
const prepared = new Map<string, { name: string; text: string }>();
const statement = (sql: string) => {
  let st = prepared.get(sql);
  if (!st) prepared.set(sql, (st = { name: `y${prepared.size + 1}`, text: numberPlaceholders(sql) }));
  return st;
};

function bound(q: Queryable): Omit<Sql, 'transaction' | 'hold' | 'close'> {
  const query = async (sql: string, params: readonly SqlParam[] = []) =>
    q.query({ ...statement(sql), values: [...params], types });
  return {
    dialect: 'postgres',
    all: async <S extends Shape>(shape: S, sql: string, params?: readonly SqlParam[]) =>
      (await query(sql, params)).rows.map((row: Record<string, unknown>) => decodeRow(shape, row, sql)),
    get: async <S extends Shape>(shape: S, sql: string, params?: readonly SqlParam[]) => {
      const row: Record<string, unknown> | undefined = (await query(sql, params)).rows[0];
      return row === undefined ? undefined : decodeRow(shape, row, sql);
    },
    run: async (sql: string, params?: readonly SqlParam[]) => ({ changes: (await query(sql, params)).rowCount ?? 0 }),
    exec: async (sql: string) => void (await q.query(sql)),
  };
}

export interface PostgresOptions {
  /** Connections in the pool. */
  max?: number;
  /** How long an idle connection is kept, in ms (pg's default: 10 s). */
  idleMs?: number;
  /** PostgreSQL's lock_timeout for every connection, in ms: a lock not had in time is `lock_not_available` (55P03). */
  lockTimeoutMs?: number;
  /** PostgreSQL's statement_timeout, in ms: a statement that runs longer is cancelled (`query_canceled`, 57014). */
  statementTimeoutMs?: number;
  /** How long a new connection may take, in ms: a server that accepts and never answers is an error, not a wait. */
  connectTimeoutMs?: number;
}

export function postgresSql(url: string, opts: PostgresOptions = {}): Sql {
  const options = [
    opts.lockTimeoutMs !== undefined ? `-c lock_timeout=${opts.lockTimeoutMs}` : '',
    opts.statementTimeoutMs !== undefined ? `-c statement_timeout=${opts.statementTimeoutMs}` : '',
  ].filter(Boolean);
  const pg = loadPg();
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    ...(opts.idleMs !== undefined ? { idleTimeoutMillis: opts.idleMs } : {}),
    ...(opts.connectTimeoutMs !== undefined ? { connectionTimeoutMillis: opts.connectTimeoutMs } : {}),
    ...(options.length ? { options: options.join(' ') } : {}),
  });
  // An idle connection the server dropped is replaced by the pool; it must not crash the process.
  pool.on('error', () => {});
  const holders = new Map<number, pg.Client>();
  return {
    ...bound(pool),
    transaction: async (fn) => {
      const client = await pool.connect();
      const tx: Sql = {
        ...bound(client),
        transaction: (f) => f(tx),
        hold: () => Promise.reject(new Error('a lock is held outside a transaction')),
        close: async () => {},
      };
      try {
        // One round trip: the transaction and its write lock (lock_timeout bounds the wait for it).
        await client.query(`BEGIN; SELECT pg_advisory_xact_lock(${WRITE_LOCK})`);
        const out = await fn(tx);
        await client.query('COMMIT');
        return out;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    hold: async (key) => {
      // A connection of its own per lock, outside the pool, kept for the next hold; it waits as long as the holder holds (no lock_timeout).
      let client = holders.get(key);
      if (!client) {
        client = new pg.Client({ connectionString: url });
        client.on('error', () => holders.delete(key)); // the session, and the lock with it, is gone; the next hold connects again
        await client.connect();
        holders.set(key, client);
      }
      const c = client;
      try {
        await c.query('SELECT pg_advisory_lock($1)', [key]);
      } catch (err) {
        holders.delete(key);
        await c.end().catch(() => undefined);
        throw err;
      }
      return async () => {
        await c.query('SELECT pg_advisory_unlock($1)', [key]).catch(() => {
          // The session broke while held: the server freed the lock with it.
          holders.delete(key);
        });
      };
    },
    close: async () => {
      await Promise.all([...holders.values()].map((c) => c.end().catch(() => undefined)));
      holders.clear();
      await pool.end();
    },
  };
}
