import type { Db } from './db.js';

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
  constructor(private readonly db: Db) {}

  register(p: { id: string; host: string; pid: number; at: number; leaseMs: number }): void {
    this.db.prepare('INSERT INTO processes (id, host, pid, started_at, alive_until) VALUES (?, ?, ?, ?, ?)').run(p.id, p.host, p.pid, p.at, p.at + p.leaseMs);
  }

  /** Renews a lease; false when it had already been ended (another process found this one gone). */
  renew(id: string, at: number, leaseMs: number): boolean {
    return this.db.prepare('UPDATE processes SET alive_until = ? WHERE id = ? AND alive_until > 0').run(at + leaseMs, id).changes === 1;
  }

  /** Ends a lease at once: the process stopped, or is known dead. */
  end(id: string): void {
    this.db.prepare('UPDATE processes SET alive_until = 0 WHERE id = ?').run(id);
  }

  alive(id: string, at: number): boolean {
    return this.db.prepare('SELECT 1 FROM processes WHERE id = ? AND alive_until > ?').get(id, at) !== undefined;
  }

  /** Processes still holding a lease. */
  living(at: number): ProcessRow[] {
    return (this.db.prepare('SELECT * FROM processes WHERE alive_until > ? ORDER BY started_at').all(at) as Row[]).map(toProcess);
  }

  /** Forgets processes whose lease lapsed long ago. */
  prune(before: number): number {
    return this.db.prepare('DELETE FROM processes WHERE alive_until < ?').run(before).changes;
  }
}
