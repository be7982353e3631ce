import type { Db } from './db.js';

// TR04: claims are yoke's own record of which PR delivers which AFK run.

export interface ClaimRecord {
  repo: string;
  prNumber: number;
  runId: string;
  issueNumber: number;
  recordedAt: number;
}

interface ClaimRow {
  repo: string;
  pr_number: number;
  run_id: string;
  issue_number: number;
  recorded_at: number;
}

const toClaim = (r: ClaimRow): ClaimRecord => ({ repo: r.repo, prNumber: r.pr_number, runId: r.run_id, issueNumber: r.issue_number, recordedAt: r.recorded_at });

export class ClaimStore {
  constructor(private readonly db: Db) {}

  /** Records a claim; false when the PR or the run is already claimed. */
  record(claim: ClaimRecord): boolean {
    const res = this.db
      .prepare('INSERT OR IGNORE INTO claims (repo, pr_number, run_id, issue_number, recorded_at) VALUES (?, ?, ?, ?, ?)')
      .run(claim.repo, claim.prNumber, claim.runId, claim.issueNumber, claim.recordedAt);
    return res.changes === 1;
  }

  listForRepo(repo: string): ClaimRecord[] {
    return (this.db.prepare('SELECT * FROM claims WHERE repo = ? ORDER BY pr_number').all(repo) as ClaimRow[]).map(toClaim);
  }

  forPull(repo: string, pr: number): ClaimRecord | undefined {
    const row = this.db.prepare('SELECT * FROM claims WHERE repo = ? AND pr_number = ?').get(repo, pr) as ClaimRow | undefined;
    return row && toClaim(row);
  }
}
