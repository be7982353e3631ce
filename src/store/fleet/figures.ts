import type { Sql } from '../sql/sql.js';
import { int, oneOf } from '../sql/columns.js';

// Counts the metrics read from the store as a scrape asks (http/operator/metrics.ts): the landers' verdicts, the
// heads whose reject a re-run reversed (LD06's flaky validations), and the merges by how they ended.

export class FigureStore {
  constructor(private readonly sql: Sql) {}

  /** Lander verdicts recorded so far, by verdict. */
  async landerVerdicts(): Promise<{ verdict: 'accept' | 'reject'; n: number }[]> {
    return this.sql.all(
      { verdict: oneOf(['accept', 'reject']), n: int },
      "SELECT verdict, COUNT(*) AS n FROM runs WHERE kind = 'lander' AND verdict IS NOT NULL GROUP BY verdict ORDER BY verdict",
    );
  }

  /** LD06: heads a lander rejected and a later lander accepted: the validation was flaky (or the base moved). */
  async flakyHeads(): Promise<number> {
    const row = await this.sql.get(
      { n: int },
      `SELECT COUNT(*) AS n FROM (
         SELECT repo, pr_number, head_sha FROM runs
         WHERE kind = 'lander' AND verdict IS NOT NULL
         GROUP BY repo, pr_number, head_sha
         HAVING MIN(CASE WHEN verdict = 'reject' THEN launched_at END) < MAX(CASE WHEN verdict = 'accept' THEN launched_at END)
       ) flips`,
    );
    return row?.n ?? 0;
  }

  /** Merges yoke made or was refused, by how they ended. */
  async merges(): Promise<{ state: 'merged' | 'refused'; n: number }[]> {
    return this.sql.all(
      { state: oneOf(['merged', 'refused']), n: int },
      'SELECT state, COUNT(*) AS n FROM merges GROUP BY state ORDER BY state',
    );
  }
}
