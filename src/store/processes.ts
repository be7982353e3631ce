import type { Sql } from './sql/sql.js';
import { TABLES, type TableRow } from './tables.js';
import { int } from './sql/columns.js';

// TR12: the yoke processes sharing this store, each with a lease it renews.
// A process is alive while its lease has not lapsed by the database's clock
// (TR31); what it holds (dispatch reservations, close-out claims) is freed
// once it is not.

export interface ProcessRow {
  id: string;
  host: string;
  pid: number;
  /** Its kernel boot and pid namespace ('' where unknown), and its pid's start time. */
  machine: string;
  pidStart: string;
  startedAt: number;
  aliveUntil: number;
}

type Row = TableRow<'processes'>;

const toProcess = (r: Row): ProcessRow => ({
  id: r.id,
  host: r.host,
  pid: Number(r.pid),
  machine: r.machine,
  pidStart: r.pid_start,
  startedAt: Number(r.started_at),
  aliveUntil: Number(r.alive_until),
});

/** SQL true when the process named by `col` holds no current lease (gone, or never registered); `nowParam` is the database's clock. */
export const ownerGone = (col: string, nowParam: string): string =>
  `NOT EXISTS (SELECT 1 FROM processes p WHERE p.id = ${col} AND p.alive_until > ${nowParam})`;

export class ProcessStore {
  constructor(
    private readonly sql: Sql,
    private readonly now: () => Promise<number>,
  ) {}

  async register(p: {
    id: string;
    host: string;
    pid: number;
    machine?: string;
    pidStart?: string;
    leaseMs: number;
  }): Promise<void> {
    const at = await this.now();
    await this.sql.run(
      'INSERT INTO processes (id, host, pid, machine, pid_start, started_at, alive_until) VALUES (?, ?, ?, ?, ?, ?, ?)',
      [p.id, p.host, p.pid, p.machine ?? '', p.pidStart ?? '', at, at + p.leaseMs],
    );
  }

  /**
   * Renews a lease that still holds; false when it had lapsed or been ended. TR12: a lapsed lease never
   * renews itself: while it was lapsed, other processes may have taken over what it held.
   */
  async renew(id: string, leaseMs: number): Promise<boolean> {
    const now = await this.now();
    return (
      (
        await this.sql.run('UPDATE processes SET alive_until = ? WHERE id = ? AND alive_until > ?', [
          now + leaseMs,
          id,
          now,
        ])
      ).changes === 1
    );
  }

  /** Ends a lease at once: the process stopped, or is known dead. */
  async end(id: string): Promise<void> {
    await this.sql.run('UPDATE processes SET alive_until = 0 WHERE id = ?', [id]);
  }

  async alive(id: string): Promise<boolean> {
    return (
      (await this.sql.get({ one: int }, 'SELECT 1 AS one FROM processes WHERE id = ? AND alive_until > ?', [
        id,
        await this.now(),
      ])) !== undefined
    );
  }

  /** SC08: a process that reads its share of the installations says so once, as its reading starts. */
  async markReader(id: string): Promise<void> {
    await this.sql.run('UPDATE processes SET reads = 1 WHERE id = ?', [id]);
  }

  /** SC08: the living processes that read their share of the installations. */
  async readers(): Promise<ProcessRow[]> {
    return (
      await this.sql.all(
        TABLES.processes,
        'SELECT * FROM processes WHERE alive_until > ? AND reads = 1 ORDER BY started_at, id',
        [await this.now()],
      )
    ).map(toProcess);
  }

  /** Processes still holding a lease. */
  async living(): Promise<ProcessRow[]> {
    return (
      await this.sql.all(TABLES.processes, 'SELECT * FROM processes WHERE alive_until > ? ORDER BY started_at', [
        await this.now(),
      ])
    ).map(toProcess);
  }

  /** Forgets processes whose lease lapsed more than `keepMs` ago. */
  async prune(keepMs: number): Promise<number> {
    return (await this.sql.run('DELETE FROM processes WHERE alive_until < ?', [(await this.now()) - keepMs])).changes;
  }
}
