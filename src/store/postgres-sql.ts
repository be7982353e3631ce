import pg from 'pg';
import { numberPlaceholders, type Sql, type SqlParam } from './sql.js';

// PostgreSQL under the async interface, through a pg pool. A transaction has
// a connection of its own for its whole life, reached through the `tx` it
// hands its code; everything else takes any connection.

const INT8 = 20;

/** 64-bit whole numbers (milliseconds, counts) come back as numbers, as SQLite gives them: every value yoke keeps is far below 2^53. */
const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === INT8 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)),
};

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

function bound(q: Queryable): Omit<Sql, 'transaction' | 'close'> {
  const query = async (sql: string, params: readonly SqlParam[] = []) => q.query({ text: numberPlaceholders(sql), values: [...params], types });
  return {
    dialect: 'postgres',
    all: async <T>(sql: string, params?: readonly SqlParam[]) => (await query(sql, params)).rows as T[],
    get: async <T>(sql: string, params?: readonly SqlParam[]) => (await query(sql, params)).rows[0] as T | undefined,
    run: async (sql: string, params?: readonly SqlParam[]) => ({ changes: (await query(sql, params)).rowCount ?? 0 }),
    exec: async (sql: string) => void (await q.query(sql)),
  };
}

export interface PostgresOptions {
  /** Connections in the pool. */
  max?: number;
  /** PostgreSQL's lock_timeout for every connection, in ms: a lock not had in time is `lock_not_available` (55P03). */
  lockTimeoutMs?: number;
  /** PostgreSQL's statement_timeout, in ms: a statement that runs longer is cancelled (`query_canceled`, 57014). */
  statementTimeoutMs?: number;
}

export function postgresSql(url: string, opts: PostgresOptions = {}): Sql {
  const options = [
    opts.lockTimeoutMs !== undefined ? `-c lock_timeout=${opts.lockTimeoutMs}` : '',
    opts.statementTimeoutMs !== undefined ? `-c statement_timeout=${opts.statementTimeoutMs}` : '',
  ].filter(Boolean);
  const pool = new pg.Pool({ connectionString: url, max: opts.max ?? 10, ...(options.length ? { options: options.join(' ') } : {}) });
  // An idle connection the server dropped is replaced by the pool; it must not crash the process.
  pool.on('error', () => {});
  return {
    ...bound(pool),
    transaction: async (fn) => {
      const client = await pool.connect();
      const tx: Sql = { ...bound(client), transaction: (f) => f(tx), close: async () => {} };
      try {
        await client.query('BEGIN');
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
    close: () => pool.end(),
  };
}
