import type { Sql } from '../sql/sql.js';
import { int } from '../sql/columns.js';
import { TABLES } from '../tables.js';

// Durable asks from people (`/yoke start`, `/yoke land`, the API). They are
// facts, like a label; the spawn pass derives candidates from them and the
// locked launch consumes one in the same transaction that records the run.

export type RequestKind = 'start' | 'land';

export interface OpenRequest {
  id: number;
  repo: string;
  kind: RequestKind;
  number: number;
  requestedBy: string;
  requestedAt: number;
}

export class RequestStore {
  constructor(private readonly sql: Sql) {}

  /** Records an ask, or returns the open one for the same thing. The caller holds the write transaction (one open ask per thing). */
  async add(repo: string, kind: RequestKind, number: number, requestedBy: string, at: number): Promise<number> {
    const open = await this.sql.get(
      { id: int },
      'SELECT id FROM requests WHERE repo = ? AND kind = ? AND number = ? AND consumed_by_run IS NULL',
      [repo, kind, number],
    );
    if (open) return open.id;
    const row = await this.sql.get(
      { id: int },
      'INSERT INTO requests (repo, kind, number, requested_by, requested_at) VALUES (?, ?, ?, ?, ?) RETURNING id',
      [repo, kind, number, requestedBy, at],
    );
    return row!.id;
  }

  async listOpen(): Promise<OpenRequest[]> {
    return (
      await this.sql.all(
        TABLES.requests,
        'SELECT * FROM requests WHERE consumed_by_run IS NULL ORDER BY requested_at, id',
      )
    ).map((r) => ({
      id: r.id,
      repo: r.repo,
      kind: r.kind,
      number: r.number,
      requestedBy: r.requested_by,
      requestedAt: r.requested_at,
    }));
  }

  async consume(id: number, runId: string): Promise<void> {
    await this.sql.run('UPDATE requests SET consumed_by_run = ? WHERE id = ? AND consumed_by_run IS NULL', [runId, id]);
  }

  /** Drops open requests that can no longer be served (issue closed, PR gone). */
  async drop(id: number): Promise<void> {
    await this.sql.run("UPDATE requests SET consumed_by_run = 'dropped' WHERE id = ? AND consumed_by_run IS NULL", [
      id,
    ]);
  }
}
