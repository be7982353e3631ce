import type { Db } from './db.js';

// TR05/QA: qa: labels handled once, by whichever of the webhook and the poll
// sees them first, and how far the poll has read each repository.

export class QaLabelStore {
  constructor(private readonly db: Db) {}

  /** Marks a label on an issue as being handled; false when someone already did. */
  mark(repo: string, issueNumber: number, label: string, at: number): boolean {
    return this.db.prepare('INSERT OR IGNORE INTO qa_label_marks (repo, issue_number, label, marked_at) VALUES (?, ?, ?, ?)').run(repo, issueNumber, label, at).changes === 1;
  }

  marked(repo: string, issueNumber: number, label: string): boolean {
    return this.db.prepare('SELECT 1 FROM qa_label_marks WHERE repo = ? AND issue_number = ? AND label = ?').get(repo, issueNumber, label) !== undefined;
  }

  setOutcome(repo: string, issueNumber: number, label: string, outcome: string): void {
    this.db.prepare('UPDATE qa_label_marks SET outcome = ? WHERE repo = ? AND issue_number = ? AND label = ?').run(outcome, repo, issueNumber, label);
  }

  /** How a label on an issue was handled, or null when it was not (or not yet). */
  outcome(repo: string, issueNumber: number, label: string): string | null {
    const row = this.db.prepare('SELECT outcome FROM qa_label_marks WHERE repo = ? AND issue_number = ? AND label = ?').get(repo, issueNumber, label) as { outcome: string | null } | undefined;
    return row?.outcome ?? null;
  }

  outcomes(repo: string): { issueNumber: number; label: string; outcome: string | null }[] {
    return (this.db.prepare('SELECT issue_number, label, outcome FROM qa_label_marks WHERE repo = ? ORDER BY issue_number, label').all(repo) as { issue_number: number; label: string; outcome: string | null }[]).map((r) => ({
      issueNumber: r.issue_number,
      label: r.label,
      outcome: r.outcome,
    }));
  }

  cursor(repo: string): { readUntil: number; readAt: number } | null {
    const row = this.db.prepare('SELECT read_until, read_at FROM qa_label_cursors WHERE repo = ?').get(repo) as { read_until: number; read_at: number } | undefined;
    return row ? { readUntil: row.read_until, readAt: row.read_at } : null;
  }

  setCursor(repo: string, readUntil: number, readAt: number): void {
    this.db
      .prepare('INSERT INTO qa_label_cursors (repo, read_until, read_at) VALUES (?, ?, ?) ON CONFLICT (repo) DO UPDATE SET read_until = MAX(read_until, excluded.read_until), read_at = excluded.read_at')
      .run(repo, readUntil, readAt);
  }
}
