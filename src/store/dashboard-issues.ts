import type { Db } from './db.js';

// Each repository's dashboard issue (labelled yoke:control) and a digest of
// the body yoke last wrote there: the body is edited only when it changes.

export interface DashboardIssue {
  repo: string;
  issueNumber: number;
  bodyDigest: string;
}

export class DashboardIssueStore {
  constructor(private readonly db: Db) {}

  get(repo: string): DashboardIssue | undefined {
    const row = this.db.prepare('SELECT repo, issue_number, body_digest FROM dashboard_issues WHERE repo = ?').get(repo) as
      | { repo: string; issue_number: number; body_digest: string }
      | undefined;
    return row && { repo: row.repo, issueNumber: row.issue_number, bodyDigest: row.body_digest };
  }

  record(repo: string, issueNumber: number, bodyDigest: string, at: number): void {
    this.db
      .prepare(
        `INSERT INTO dashboard_issues (repo, issue_number, body_digest, written_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (repo) DO UPDATE SET issue_number = excluded.issue_number, body_digest = excluded.body_digest, written_at = excluded.written_at`,
      )
      .run(repo, issueNumber, bodyDigest, at);
  }
}
