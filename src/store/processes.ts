import type { Sql } from './sql.js';

// TR12: the yoke processes sharing this store, each with a lease it renews.
// A process is alive while its lease has not lapsed; what it holds (dispatch
// reservations, close-out claims) is freed once it is not.

export interface ProcessRow {
  id: string;
  host: string;
  pid: number;
  startedAt: number;
  aliveUntil: number;
}

interface Row {
  id: string;
  host: string;
  pid: number;
  started_at: number;
  alive_until: number;
}

const toProcess = (r: Row): ProcessRow => ({ id: r.id, host: r.host, pid: r.pid, startedAt: r.started_at, aliveUntil: r.alive_until });

/** SQL true when the process named by `col` holds no current lease (gone, or never registered). */
export const ownerGone = (col: string, nowParam: string): string => `NOT EXISTS (SELECT 1 FROM processes p WHERE p.id = ${col} AND p.alive_until > ${nowParam})`;

export class ProcessStore {
  constructor(private readonly sql: Sql) {}

  async register(p: { id: string; host: string; pid: number; at: number; leaseMs: number }): Promise<void> {
    await this.sql.run('INSERT INTO processes (id, host, pid, started_at, alive_until) VALUES (?, ?, ?, ?, ?)', [p.id, p.host, p.pid, p.at, p.at + p.leaseMs]);
  }

  /** Renews a lease; false when it had already been ended (another process found this one gone). */
  async renew(id: string, at: number, leaseMs: number): Promise<boolean> {
    return (await this.sql.run('UPDATE processes SET alive_until = ? WHERE id = ? AND alive_until > 0', [at + leaseMs, id])).changes === 1;
  }

  /** Ends a lease at once: the process stopped, or is known dead. */
  async end(id: string): Promise<void> {
    await this.sql.run('UPDATE processes SET alive_until = 0 WHERE id = ?', [id]);
  }

  async alive(id: string, at: number): Promise<boolean> {
    return (await this.sql.get('SELECT 1 AS one FROM processes WHERE id = ? AND alive_until > ?', [id, at])) !== undefined;
  }

  /** Processes still holding a lease. */
  async living(at: number): Promise<ProcessRow[]> {
    return (await this.sql.all<Row>('SELECT * FROM processes WHERE alive_until > ? ORDER BY started_at', [at])).map(toProcess);
  }

  /** Forgets processes whose lease lapsed long ago. */
  async prune(before: number): Promise<number> {
    return (await this.sql.run('DELETE FROM processes WHERE alive_until < ?', [before])).changes;
  }
}
