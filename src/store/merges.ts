import type { Db } from './db.js';

export interface MergeRecord {
  repo: string;
  prNumber: number;
  headSha: string;
  state: 'merged' | 'refused';
  detail: string | null;
  at: number;
}

/** One merge attempt per (PR, head): a refused merge is never retried blindly. */
export class MergeStore {
  constructor(private readonly db: Db) {}

  get(repo: string, prNumber: number, headSha: string): MergeRecord | undefined {
    const r = this.db.prepare('SELECT * FROM merges WHERE repo = ? AND pr_number = ? AND head_sha = ?').get(repo, prNumber, headSha) as
      | { repo: string; pr_number: number; head_sha: string; state: 'merged' | 'refused'; detail: string | null; at: number }
      | undefined;
    return r && { repo: r.repo, prNumber: r.pr_number, headSha: r.head_sha, state: r.state, detail: r.detail, at: r.at };
  }

  record(rec: MergeRecord): void {
    this.db
      .prepare('INSERT OR REPLACE INTO merges (repo, pr_number, head_sha, state, detail, at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(rec.repo, rec.prNumber, rec.headSha, rec.state, rec.detail, rec.at);
  }
}
