import type { Db } from './db.js';

export interface MergeRecord {
  repo: string;
  prNumber: number;
  headSha: string;
  state: 'merged' | 'refused';
  detail: string | null;
  at: number;
  /** The lander run whose accept this merge followed. */
  runId: string | null;
}

/**
 * One merge attempt per (PR, head, verdict): a refused merge is not retried
 * on the same verdict, but a fresh accept (a new lander) may try again.
 */
export class MergeStore {
  constructor(private readonly db: Db) {}

  /** The head a PR was merged at, as yoke merged it (or null). */
  mergedHead(repo: string, prNumber: number): string | null {
    const r = this.db.prepare("SELECT head_sha FROM merges WHERE repo = ? AND pr_number = ? AND state = 'merged' ORDER BY at DESC LIMIT 1").get(repo, prNumber) as { head_sha: string } | undefined;
    return r?.head_sha ?? null;
  }

  get(repo: string, prNumber: number, headSha: string): MergeRecord | undefined {
    const r = this.db.prepare('SELECT * FROM merges WHERE repo = ? AND pr_number = ? AND head_sha = ?').get(repo, prNumber, headSha) as
      | { repo: string; pr_number: number; head_sha: string; state: 'merged' | 'refused'; detail: string | null; at: number; run_id: string | null }
      | undefined;
    return r && { repo: r.repo, prNumber: r.pr_number, headSha: r.head_sha, state: r.state, detail: r.detail, at: r.at, runId: r.run_id };
  }

  /** Whether the merge that this verdict run would lead to was already attempted. */
  attempted(repo: string, prNumber: number, headSha: string, runId: string): boolean {
    const rec = this.get(repo, prNumber, headSha);
    return rec !== undefined && (rec.state === 'merged' || rec.runId === runId || rec.runId === null);
  }

  record(rec: MergeRecord): void {
    this.db
      .prepare('INSERT OR REPLACE INTO merges (repo, pr_number, head_sha, state, detail, at, run_id) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(rec.repo, rec.prNumber, rec.headSha, rec.state, rec.detail, rec.at, rec.runId);
  }
}
