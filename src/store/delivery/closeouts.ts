import type { Refusal } from '../../kernel/codes/table.js';
import { ownerGone } from '../processes.js';
import type { Sql } from '../sql/sql.js';
import { text } from '../sql/columns.js';
import { TABLES, type TableRow } from '../tables.js';

// DX01-DX06: the close-out of each member of a run, exactly once.

export interface Closeout {
  runId: string;
  issueNumber: number;
  stage: string;
  state: 'running' | 'closed' | 'refused';
  refusal: Refusal | null;
  noticeCommentId: number | null;
  attempts: number;
  startedAt: number;
  updatedAt: number;
}

type Row = TableRow<'closeouts'>;

const toCloseout = (r: Row): Closeout => ({
  runId: r.run_id,
  issueNumber: r.issue_number,
  stage: r.stage,
  state: r.state,
  refusal: r.refusal,
  noticeCommentId: r.notice_comment_id,
  attempts: r.attempts,
  startedAt: r.started_at,
  updatedAt: r.updated_at,
});

export class CloseoutStore {
  constructor(
    private readonly sql: Sql,
    /** The database's clock, which process leases compare (TR31). */
    private readonly leaseNow: () => Promise<number>,
  ) {}

  /**
   * Claims a member's close-out for process `owner`: true when it may run it
   * (new, refused before, or 'running' under a process that is gone: TR12).
   * A claim left by a process recorded before leases existed goes stale after
   * `staleMs`. A closed member is never claimed again. Each step is one
   * statement, so two processes claiming at once cannot both win.
   */
  async claim(
    runId: string,
    issueNumber: number,
    stage: string,
    at: number,
    owner: string,
    staleMs: number,
  ): Promise<boolean> {
    const fresh = await this.sql.run(
      "INSERT INTO closeouts (run_id, issue_number, stage, state, owner, started_at, updated_at) VALUES (?, ?, ?, 'running', ?, ?, ?) ON CONFLICT DO NOTHING",
      [runId, issueNumber, stage, owner, at, at],
    );
    if (fresh.changes === 1) return true;
    const taken = await this.sql.run(
      `UPDATE closeouts SET state = 'running', owner = ?, attempts = attempts + 1, updated_at = ?
       WHERE run_id = ? AND issue_number = ? AND (
         state = 'refused'
         OR (state = 'running' AND owner IS NULL AND ? - updated_at >= ?)
         OR (state = 'running' AND owner IS NOT NULL AND ${ownerGone('closeouts.owner', '?')})
       )`,
      [owner, at, runId, issueNumber, at, staleMs, await this.leaseNow()],
    );
    return taken.changes === 1;
  }

  /**
   * TR12: records how a close-out ended, only for the process that holds its claim: one that stalled past
   * its lease, whose claim another process took and redid, changes nothing. False when it was not its own.
   */
  async finish(
    runId: string,
    issueNumber: number,
    outcome: { state: 'closed'; noticeCommentId: number | null } | { state: 'refused'; refusal: Refusal },
    at: number,
    owner: string,
  ): Promise<boolean> {
    const done = await this.sql.run(
      "UPDATE closeouts SET state = ?, refusal = ?, notice_comment_id = COALESCE(?, notice_comment_id), updated_at = ? WHERE run_id = ? AND issue_number = ? AND state = 'running' AND owner = ?",
      [
        outcome.state,
        outcome.state === 'refused' ? JSON.stringify(outcome.refusal) : null,
        outcome.state === 'closed' ? outcome.noticeCommentId : null,
        at,
        runId,
        issueNumber,
        owner,
      ],
    );
    return done.changes === 1;
  }

  async forRun(runId: string): Promise<Closeout[]> {
    return (
      await this.sql.all(
        TABLES.closeouts,
        'SELECT * FROM closeouts WHERE run_id = ? ORDER BY started_at, issue_number',
        [runId],
      )
    ).map(toCloseout);
  }

  /** Runs with a refused close-out (DX04: they are retried until the blocking record settles). */
  async refusedRuns(): Promise<string[]> {
    return (await this.sql.all({ run_id: text }, "SELECT DISTINCT run_id FROM closeouts WHERE state = 'refused'")).map(
      (r) => r.run_id,
    );
  }
}
