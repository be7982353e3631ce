import type { Sql } from '../sql/sql.js';
import { int, nullable, text } from '../sql/columns.js';

// TR05/QA: qa: labels handled once, by whichever of the webhook and the poll
// sees them first, and how far the poll has read each repository.

export class QaLabelStore {
  constructor(private readonly sql: Sql) {}

  /** Marks a label on an issue as being handled; false when someone already did. */
  async mark(repo: string, issueNumber: number, label: string, at: number): Promise<boolean> {
    return (
      (
        await this.sql.run(
          'INSERT INTO qa_label_marks (repo, issue_number, label, marked_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
          [repo, issueNumber, label, at],
        )
      ).changes === 1
    );
  }

  async marked(repo: string, issueNumber: number, label: string): Promise<boolean> {
    return (
      (await this.sql.get(
        { one: int },
        'SELECT 1 AS one FROM qa_label_marks WHERE repo = ? AND issue_number = ? AND label = ?',
        [repo, issueNumber, label],
      )) !== undefined
    );
  }

  async setOutcome(repo: string, issueNumber: number, label: string, outcome: string): Promise<void> {
    await this.sql.run('UPDATE qa_label_marks SET outcome = ? WHERE repo = ? AND issue_number = ? AND label = ?', [
      outcome,
      repo,
      issueNumber,
      label,
    ]);
  }

  /** How a label on an issue was handled, or null when it was not (or not yet). */
  async outcome(repo: string, issueNumber: number, label: string): Promise<string | null> {
    const row = await this.sql.get(
      { outcome: nullable(text) },
      'SELECT outcome FROM qa_label_marks WHERE repo = ? AND issue_number = ? AND label = ?',
      [repo, issueNumber, label],
    );
    return row?.outcome ?? null;
  }

  async outcomes(repo: string): Promise<{ issueNumber: number; label: string; outcome: string | null }[]> {
    const rows = await this.sql.all(
      { issue_number: int, label: text, outcome: nullable(text) },
      'SELECT issue_number, label, outcome FROM qa_label_marks WHERE repo = ? ORDER BY issue_number, label',
      [repo],
    );
    return rows.map((r) => ({ issueNumber: r.issue_number, label: r.label, outcome: r.outcome }));
  }

  async cursor(repo: string): Promise<{ readUntil: number; readAt: number } | null> {
    const row = await this.sql.get(
      { read_until: int, read_at: int },
      'SELECT read_until, read_at FROM qa_label_cursors WHERE repo = ?',
      [repo],
    );
    return row ? { readUntil: row.read_until, readAt: row.read_at } : null;
  }

  /** SC01: every repository's cursor in one query, for a sweep over them all. */
  async cursors(): Promise<Map<string, { readUntil: number; readAt: number }>> {
    const rows = await this.sql.all(
      { repo: text, read_until: int, read_at: int },
      'SELECT repo, read_until, read_at FROM qa_label_cursors',
    );
    return new Map(rows.map((r) => [r.repo, { readUntil: r.read_until, readAt: r.read_at }]));
  }

  /** Moves the cursor on, never back (a late answer from an older read leaves it where it is). */
  async setCursor(repo: string, readUntil: number, readAt: number): Promise<void> {
    await this.sql.run(
      `INSERT INTO qa_label_cursors (repo, read_until, read_at) VALUES (?, ?, ?)
       ON CONFLICT (repo) DO UPDATE SET read_until = CASE WHEN excluded.read_until > qa_label_cursors.read_until THEN excluded.read_until ELSE qa_label_cursors.read_until END, read_at = excluded.read_at`,
      [repo, readUntil, readAt],
    );
  }
}
