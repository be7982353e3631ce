import type { Sql } from '../sql/sql.js';
import { TABLES, type TableRow } from '../tables.js';

/** LD04: an accepted claim PR yoke added to GitHub's merge queue (or tried to), on the accept of one lander run. */
export interface EnqueueRecord {
  repo: string;
  prNumber: number;
  headSha: string;
  /** The lander run whose accept this followed. */
  runId: string;
  state: 'queued' | 'refused';
  detail: string | null;
  at: number;
}

type EnqueueRow = TableRow<'enqueues'>;

const toEnqueue = (r: EnqueueRow): EnqueueRecord => ({
  repo: r.repo,
  prNumber: Number(r.pr_number),
  headSha: r.head_sha,
  runId: r.run_id,
  state: r.state,
  detail: r.detail,
  at: Number(r.at),
});

/** One attempt to queue per (PR, head, accept): GitHub's answer is kept, and the same accept is not queued again. */
export class EnqueueStore {
  constructor(private readonly sql: Sql) {}

  async listForRepo(repo: string): Promise<EnqueueRecord[]> {
    return (await this.sql.all(TABLES.enqueues, 'SELECT * FROM enqueues WHERE repo = ? ORDER BY at', [repo])).map(
      toEnqueue,
    );
  }

  async record(rec: EnqueueRecord): Promise<void> {
    await this.sql.run(
      `INSERT INTO enqueues (repo, pr_number, head_sha, run_id, state, detail, at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (repo, pr_number, head_sha, run_id) DO UPDATE SET state = excluded.state, detail = excluded.detail, at = excluded.at`,
      [rec.repo, rec.prNumber, rec.headSha, rec.runId, rec.state, rec.detail, rec.at],
    );
  }
}
