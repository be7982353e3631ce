import type { Sql } from '../sql/sql.js';
import { TABLES, type TableRow } from '../tables.js';

// TR14: claim heads held for a person's approval, and who gave it.

export interface ProtectedHold {
  repo: string;
  prNumber: number;
  headSha: string;
  /** The protected paths the change touches. */
  files: string[];
  /** The one comment on the PR that says so. */
  commentId: number | null;
  /** The writer whose approval of this head released it, once one did. */
  approvedBy: string | null;
  recordedAt: number;
}

type Row = TableRow<'protected_holds'>;

const toHold = (r: Row): ProtectedHold => ({
  repo: r.repo,
  prNumber: r.pr_number,
  headSha: r.head_sha,
  files: r.files,
  commentId: r.comment_id === null ? null : Number(r.comment_id),
  approvedBy: r.approved_by,
  recordedAt: Number(r.recorded_at),
});

export class ProtectedHoldStore {
  constructor(private readonly sql: Sql) {}

  async list(repo?: string): Promise<ProtectedHold[]> {
    const rows =
      repo === undefined
        ? await this.sql.all(TABLES.protected_holds, 'SELECT * FROM protected_holds ORDER BY recorded_at')
        : await this.sql.all(
            TABLES.protected_holds,
            'SELECT * FROM protected_holds WHERE repo = ? ORDER BY recorded_at',
            [repo],
          );
    return rows.map(toHold);
  }

  /**
   * Records a head once (files: [] when nothing it changes is protected). A second call changes nothing,
   * except that a head first found clear takes the files found later (protected_paths grew meanwhile).
   */
  async hold(h: Omit<ProtectedHold, 'approvedBy' | 'commentId'>): Promise<void> {
    await this.sql.run(
      "INSERT INTO protected_holds (repo, pr_number, head_sha, files, recorded_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (repo, pr_number, head_sha) DO UPDATE SET files = excluded.files WHERE protected_holds.files = '[]'",
      [h.repo, h.prNumber, h.headSha, JSON.stringify(h.files), h.recordedAt],
    );
  }

  async setComment(repo: string, prNumber: number, headSha: string, commentId: number): Promise<void> {
    await this.sql.run('UPDATE protected_holds SET comment_id = ? WHERE repo = ? AND pr_number = ? AND head_sha = ?', [
      commentId,
      repo,
      prNumber,
      headSha,
    ]);
  }

  async approve(repo: string, prNumber: number, headSha: string, by: string): Promise<void> {
    await this.sql.run(
      'UPDATE protected_holds SET approved_by = ? WHERE repo = ? AND pr_number = ? AND head_sha = ? AND approved_by IS NULL',
      [by, repo, prNumber, headSha],
    );
  }
}
