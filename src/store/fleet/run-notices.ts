import type { Sql } from '../sql/sql.js';
import { int, text } from '../sql/columns.js';

// TR/DX: the comment on an issue or claim PR that says its last AFK or fix
// run failed, and which run it shows, so the next failure edits it in place.

export interface RunNoticeRecord {
  repo: string;
  thread: number;
  commentId: number;
  runId: string;
}

export class RunNoticeStore {
  constructor(private readonly sql: Sql) {}

  async list(): Promise<RunNoticeRecord[]> {
    const rows = await this.sql.all(
      { repo: text, thread: int, comment_id: int, run_id: text },
      'SELECT repo, thread, comment_id, run_id FROM run_notices',
    );
    return rows.map((r) => ({ repo: r.repo, thread: r.thread, commentId: r.comment_id, runId: r.run_id }));
  }

  async record(n: RunNoticeRecord, at: number): Promise<void> {
    await this.sql.run(
      'INSERT INTO run_notices (repo, thread, comment_id, run_id, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (repo, thread) DO UPDATE SET comment_id = excluded.comment_id, run_id = excluded.run_id, updated_at = excluded.updated_at',
      [n.repo, n.thread, n.commentId, n.runId, at],
    );
  }
}
