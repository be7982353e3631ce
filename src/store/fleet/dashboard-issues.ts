import { allGrouped, type Sql } from '../sql/sql.js';
import { int, text } from '../sql/columns.js';

// Each repository's dashboard issue (labelled yoke:control) and a digest of
// the body yoke last wrote there: the body is edited only when it changes.

export interface DashboardIssue {
  repo: string;
  issueNumber: number;
  bodyDigest: string;
}

export class DashboardIssueStore {
  constructor(private readonly sql: Sql) {}

  async get(repo: string): Promise<DashboardIssue | undefined> {
    const row = await this.sql.get(
      { repo: text, issue_number: int, body_digest: text },
      'SELECT repo, issue_number, body_digest FROM dashboard_issues WHERE repo = ?',
      [repo],
    );
    return row && { repo: row.repo, issueNumber: row.issue_number, bodyDigest: row.body_digest };
  }

  /** SC01: the dashboard issues of these repositories, by repository. */
  async listForRepos(repos: readonly string[]): Promise<Map<string, DashboardIssue>> {
    const rows = await allGrouped(
      this.sql,
      {
        shape: { repo: text, issue_number: int, body_digest: text },
        statement: 'SELECT repo, issue_number, body_digest FROM dashboard_issues WHERE repo IN (?)',
        values: repos,
      },
      { keyOf: (r) => r.repo, map: (r) => ({ repo: r.repo, issueNumber: r.issue_number, bodyDigest: r.body_digest }) },
    );
    return new Map([...rows].map(([repo, [issue]]) => [repo, issue!]));
  }

  async record(repo: string, issueNumber: number, bodyDigest: string, at: number): Promise<void> {
    await this.sql.run(
      `INSERT INTO dashboard_issues (repo, issue_number, body_digest, written_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (repo) DO UPDATE SET issue_number = excluded.issue_number, body_digest = excluded.body_digest, written_at = excluded.written_at`,
      [repo, issueNumber, bodyDigest, at],
    );
  }
}
