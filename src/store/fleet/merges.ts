import type { Sql } from '../sql/sql.js';
import { int, text } from '../sql/columns.js';
import { TABLES, type TableRow } from '../tables.js';

export interface MergeRecord {
  repo: string;
  prNumber: number;
  headSha: string;
  state: 'merged' | 'refused';
  detail: string | null;
  at: number;
  /** The lander run whose accept this merge followed. */
  runId: string | null;
  /** LD03: the commit the base branch was at when yoke merged, and the commit the merge made (null: not recorded). */
  baseSha?: string | null;
  mergeSha?: string | null;
}

type MergeRow = TableRow<'merges'>;

const toMerge = (r: MergeRow): MergeRecord => ({
  repo: r.repo,
  prNumber: Number(r.pr_number),
  headSha: r.head_sha,
  state: r.state,
  detail: r.detail,
  at: Number(r.at),
  runId: r.run_id,
  baseSha: r.base_sha ?? null,
  mergeSha: r.merge_sha ?? null,
});

/** A merge at this head was attempted for this verdict run: merged, or refused on this same verdict (or before verdicts were recorded). */
export const wasAttempted = (rec: MergeRecord | undefined, runId: string): boolean =>
  rec !== undefined && (rec.state === 'merged' || rec.runId === runId || rec.runId === null);

/**
 * One merge attempt per (PR, head, verdict): a refused merge is not retried
 * on the same verdict, but a fresh accept (a new lander) may try again.
 */
export class MergeStore {
  constructor(private readonly sql: Sql) {}

  /** The head a PR was merged at, as yoke merged it (or null). */
  async mergedHead(repo: string, prNumber: number): Promise<string | null> {
    const r = await this.sql.get(
      { head_sha: text },
      "SELECT head_sha FROM merges WHERE repo = ? AND pr_number = ? AND state = 'merged' ORDER BY at DESC LIMIT 1",
      [repo, prNumber],
    );
    return r?.head_sha ?? null;
  }

  /** The heads these PRs were merged at, as yoke merged them, in one statement; a PR yoke did not merge is absent. */
  async mergedHeads(repo: string, prNumbers: readonly number[]): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    if (prNumbers.length === 0) return out;
    const rows = await this.sql.all(
      { pr_number: int, head_sha: text },
      `SELECT pr_number, head_sha FROM merges WHERE repo = ? AND state = 'merged' AND pr_number IN (${prNumbers.map(() => '?').join(', ')}) ORDER BY at`,
      [repo, ...prNumbers],
    );
    // Oldest first, so the newest merge of a PR is the one kept.
    for (const r of rows) out.set(Number(r.pr_number), r.head_sha);
    return out;
  }

  async get(repo: string, prNumber: number, headSha: string): Promise<MergeRecord | undefined> {
    const r = await this.sql.get(
      TABLES.merges,
      'SELECT * FROM merges WHERE repo = ? AND pr_number = ? AND head_sha = ?',
      [repo, prNumber, headSha],
    );
    return r && toMerge(r);
  }

  /** Whether the merge that this verdict run would lead to was already attempted. */
  async attempted(repo: string, prNumber: number, headSha: string, runId: string): Promise<boolean> {
    return wasAttempted(await this.get(repo, prNumber, headSha), runId);
  }

  /** Every merge attempt in a repository, for a decision to look them up without asking again. */
  async listForRepo(repo: string): Promise<MergeRecord[]> {
    return (await this.sql.all(TABLES.merges, 'SELECT * FROM merges WHERE repo = ? ORDER BY at', [repo])).map(toMerge);
  }

  async record(rec: MergeRecord): Promise<void> {
    await this.sql.run(
      `INSERT INTO merges (repo, pr_number, head_sha, state, detail, at, run_id, base_sha, merge_sha) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (repo, pr_number, head_sha) DO UPDATE SET state = excluded.state, detail = excluded.detail, at = excluded.at, run_id = excluded.run_id, base_sha = excluded.base_sha, merge_sha = excluded.merge_sha`,
      [
        rec.repo,
        rec.prNumber,
        rec.headSha,
        rec.state,
        rec.detail,
        rec.at,
        rec.runId,
        rec.baseSha ?? null,
        rec.mergeSha ?? null,
      ],
    );
  }
}
