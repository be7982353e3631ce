import type { Db } from './db.js';

// TR/DX: the comment on an issue or claim PR that says its last AFK or fix
// run failed, and which run it shows, so the next failure edits it in place.

export interface RunNoticeRecord {
  repo: string;
  thread: number;
  commentId: number;
  runId: string;
}

export class RunNoticeStore {
  constructor(private readonly db: Db) {}

  list(): RunNoticeRecord[] {
    return (this.db.prepare('SELECT repo, thread, comment_id, run_id FROM run_notices').all() as { repo: string; thread: number; comment_id: number; run_id: string }[]).map((r) => ({
      repo: r.repo,
      thread: r.thread,
      commentId: r.comment_id,
      runId: r.run_id,
    }));
  }

  record(n: RunNoticeRecord, at: number): void {
    this.db
      .prepare('INSERT INTO run_notices (repo, thread, comment_id, run_id, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (repo, thread) DO UPDATE SET comment_id = excluded.comment_id, run_id = excluded.run_id, updated_at = excluded.updated_at')
      .run(n.repo, n.thread, n.commentId, n.runId, at);
  }
}
