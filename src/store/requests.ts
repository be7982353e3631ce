import type { Db } from './db.js';

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
  constructor(private readonly db: Db) {}

  add(repo: string, kind: RequestKind, number: number, requestedBy: string, at: number): number {
    const open = this.db
      .prepare('SELECT id FROM requests WHERE repo = ? AND kind = ? AND number = ? AND consumed_by_run IS NULL')
      .get(repo, kind, number) as { id: number } | undefined;
    if (open) return open.id;
    return Number(
      this.db
        .prepare('INSERT INTO requests (repo, kind, number, requested_by, requested_at) VALUES (?, ?, ?, ?, ?)')
        .run(repo, kind, number, requestedBy, at).lastInsertRowid,
    );
  }

  listOpen(): OpenRequest[] {
    return (
      this.db
        .prepare('SELECT * FROM requests WHERE consumed_by_run IS NULL ORDER BY requested_at, id')
        .all() as { id: number; repo: string; kind: RequestKind; number: number; requested_by: string; requested_at: number }[]
    ).map((r) => ({ id: r.id, repo: r.repo, kind: r.kind, number: r.number, requestedBy: r.requested_by, requestedAt: r.requested_at }));
  }

  consume(id: number, runId: string): void {
    this.db.prepare('UPDATE requests SET consumed_by_run = ? WHERE id = ? AND consumed_by_run IS NULL').run(runId, id);
  }

  /** Drops open requests that can no longer be served (issue closed, PR gone). */
  drop(id: number): void {
    this.db.prepare("UPDATE requests SET consumed_by_run = 'dropped' WHERE id = ? AND consumed_by_run IS NULL").run(id);
  }
}
