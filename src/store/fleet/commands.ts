import type { Sql } from '../sql/sql.js';
import { int } from '../sql/columns.js';
import { TABLES, type TableRow } from '../tables.js';

export type CommandState = 'processing' | 'done' | 'failed';

export interface CommandRecord {
  commentId: number;
  repo: string;
  issueNumber: number;
  author: string;
  body: string;
  state: CommandState;
  outcome: string | null;
  receivedVia: 'webhook' | 'poll';
  processedAt: number;
  attempts: number;
}

type CommandRow = TableRow<'commands'>;

const toRecord = (r: CommandRow): CommandRecord => ({
  commentId: r.comment_id,
  repo: r.repo,
  issueNumber: r.issue_number,
  author: r.author,
  body: r.body,
  state: r.state,
  outcome: r.outcome,
  receivedVia: r.received_via,
  processedAt: r.processed_at,
  attempts: r.attempts,
});

export class CommandStore {
  constructor(private readonly sql: Sql) {}

  /**
   * Claims a comment id for processing: the first sight (webhook or poll), or
   * a retry of one that failed, or of one a crash left processing longer than
   * staleMs. False when another handler has it or it is settled. Each step is
   * one statement, so the webhook and the poll cannot both win.
   */
  async claim(
    rec: Omit<CommandRecord, 'state' | 'outcome' | 'attempts'>,
    retry: { maxAttempts: number; staleMs: number },
  ): Promise<boolean> {
    const inserted = await this.sql.run(
      `INSERT INTO commands (comment_id, repo, issue_number, author, body, state, received_via, processed_at, attempts)
       VALUES (?, ?, ?, ?, ?, 'processing', ?, ?, 1) ON CONFLICT DO NOTHING`,
      [rec.commentId, rec.repo, rec.issueNumber, rec.author, rec.body, rec.receivedVia, rec.processedAt],
    );
    if (inserted.changes === 1) return true;
    const retried = await this.sql.run(
      `UPDATE commands SET state = 'processing', attempts = attempts + 1, processed_at = ?
       WHERE comment_id = ? AND attempts < ? AND (state = 'failed' OR (state = 'processing' AND processed_at <= ?))`,
      [rec.processedAt, rec.commentId, retry.maxAttempts, rec.processedAt - retry.staleMs],
    );
    return retried.changes === 1;
  }

  async finish(commentId: number, outcome: string): Promise<void> {
    await this.sql.run("UPDATE commands SET state = 'done', outcome = ? WHERE comment_id = ?", [outcome, commentId]);
  }

  /** The handling threw: retried on a later poll while attempts remain. */
  async fail(commentId: number, detail: string): Promise<void> {
    await this.sql.run("UPDATE commands SET state = 'failed', outcome = ? WHERE comment_id = ?", [
      detail.slice(0, 500),
      commentId,
    ]);
  }

  async get(commentId: number): Promise<CommandRecord | undefined> {
    const r = await this.sql.get(TABLES.commands, 'SELECT * FROM commands WHERE comment_id = ?', [commentId]);
    return r && toRecord(r);
  }

  async count(): Promise<number> {
    return (await this.sql.get({ n: int }, 'SELECT COUNT(*) AS n FROM commands'))!.n;
  }
}
