import { allGrouped, type Sql } from '../sql/sql.js';
import { TABLES, type TableRow } from '../tables.js';

// TR04: claims are yoke's own record of which PR delivers which AFK run.

export interface ClaimRecord {
  repo: string;
  prNumber: number;
  runId: string;
  issueNumber: number;
  recordedAt: number;
}

type ClaimRow = TableRow<'claims'>;

const toClaim = (r: ClaimRow): ClaimRecord => ({
  repo: r.repo,
  prNumber: r.pr_number,
  runId: r.run_id,
  issueNumber: r.issue_number,
  recordedAt: r.recorded_at,
});

export class ClaimStore {
  constructor(private readonly sql: Sql) {}

  /** Records a claim; false when the PR or the run is already claimed. */
  async record(claim: ClaimRecord): Promise<boolean> {
    const res = await this.sql.run(
      'INSERT INTO claims (repo, pr_number, run_id, issue_number, recorded_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
      [claim.repo, claim.prNumber, claim.runId, claim.issueNumber, claim.recordedAt],
    );
    return res.changes === 1;
  }

  async listForRepo(repo: string): Promise<ClaimRecord[]> {
    return (await this.sql.all(TABLES.claims, 'SELECT * FROM claims WHERE repo = ? ORDER BY pr_number', [repo])).map(
      toClaim,
    );
  }

  /** SC01: the claims of each of these repositories, by repository. */
  async listForRepos(repos: readonly string[]): Promise<Map<string, ClaimRecord[]>> {
    return allGrouped(
      this.sql,
      { shape: TABLES.claims, statement: 'SELECT * FROM claims WHERE repo IN (?) ORDER BY pr_number', values: repos },
      {
        keyOf: (r) => r.repo,
        map: toClaim,
      },
    );
  }

  async forPull(repo: string, pr: number): Promise<ClaimRecord | undefined> {
    const row = await this.sql.get(TABLES.claims, 'SELECT * FROM claims WHERE repo = ? AND pr_number = ?', [repo, pr]);
    return row && toClaim(row);
  }
}
