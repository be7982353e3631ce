import type { Db } from './db.js';

export interface CommandRecord {
  commentId: number;
  repo: string;
  issueNumber: number;
  author: string;
  body: string;
  state: 'processing' | 'done';
  outcome: string | null;
  receivedVia: 'webhook' | 'poll';
  processedAt: number;
}

export class CommandStore {
  constructor(private readonly db: Db) {}

  /** Claims a comment id for processing; false when it was claimed before (webhook or poll). */
  claim(rec: Omit<CommandRecord, 'state' | 'outcome'>): boolean {
    const res = this.db
      .prepare(
        `INSERT OR IGNORE INTO commands (comment_id, repo, issue_number, author, body, state, received_via, processed_at)
         VALUES (?, ?, ?, ?, ?, 'processing', ?, ?)`,
      )
      .run(rec.commentId, rec.repo, rec.issueNumber, rec.author, rec.body, rec.receivedVia, rec.processedAt);
    return res.changes === 1;
  }

  finish(commentId: number, outcome: string): void {
    this.db.prepare("UPDATE commands SET state = 'done', outcome = ? WHERE comment_id = ?").run(outcome, commentId);
  }

  get(commentId: number): CommandRecord | undefined {
    const r = this.db.prepare('SELECT * FROM commands WHERE comment_id = ?').get(commentId) as
      | {
          comment_id: number;
          repo: string;
          issue_number: number;
          author: string;
          body: string;
          state: 'processing' | 'done';
          outcome: string | null;
          received_via: 'webhook' | 'poll';
          processed_at: number;
        }
      | undefined;
    return (
      r && {
        commentId: r.comment_id,
        repo: r.repo,
        issueNumber: r.issue_number,
        author: r.author,
        body: r.body,
        state: r.state,
        outcome: r.outcome,
        receivedVia: r.received_via,
        processedAt: r.processed_at,
      }
    );
  }

  count(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM commands').get() as { n: number }).n;
  }
}
