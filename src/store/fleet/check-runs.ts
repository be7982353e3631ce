import type { Sql } from '../sql/sql.js';
import { TABLES } from '../tables.js';

// The yoke/lander check run of each claim PR head, and what yoke last wrote
// to it, so a check run is written only when what it should say changes.

export interface CheckRecord {
  repo: string;
  prNumber: number;
  headSha: string;
  checkRunId: number;
  /** What yoke last wrote, as planned (e.g. `in_progress::run7`, `completed:success:run7`). */
  written: string;
}

export class CheckRunStore {
  constructor(private readonly sql: Sql) {}

  async list(): Promise<CheckRecord[]> {
    return (await this.sql.all(TABLES.check_runs, 'SELECT * FROM check_runs')).map((r) => ({
      repo: r.repo,
      prNumber: r.pr_number,
      headSha: r.head_sha,
      checkRunId: r.check_run_id,
      written: r.written,
    }));
  }

  async record(c: CheckRecord, at: number): Promise<void> {
    await this.sql.run(
      `INSERT INTO check_runs (repo, pr_number, head_sha, check_run_id, written, updated_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (repo, pr_number, head_sha) DO UPDATE SET check_run_id = excluded.check_run_id, written = excluded.written, updated_at = excluded.updated_at`,
      [c.repo, c.prNumber, c.headSha, c.checkRunId, c.written, at],
    );
  }
}
