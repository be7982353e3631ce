import type { Refusal } from '../codes.js';
import type { Db } from './db.js';

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

interface Row {
  run_id: string;
  issue_number: number;
  stage: string;
  state: Closeout['state'];
  refusal: string | null;
  notice_comment_id: number | null;
  attempts: number;
  started_at: number;
  updated_at: number;
}

const toCloseout = (r: Row): Closeout => ({
  runId: r.run_id,
  issueNumber: r.issue_number,
  stage: r.stage,
  state: r.state,
  refusal: r.refusal ? (JSON.parse(r.refusal) as Refusal) : null,
  noticeCommentId: r.notice_comment_id,
  attempts: r.attempts,
  startedAt: r.started_at,
  updatedAt: r.updated_at,
});

export class CloseoutStore {
  constructor(private readonly db: Db) {}

  /**
   * Claims a member's close-out for process `owner`: true when it may run it
   * (new, refused before, or 'running' under a process that is gone: TR12).
   * A claim left by a process recorded before leases existed goes stale after
   * `staleMs`. A closed member is never claimed again.
   */
  claim(runId: string, issueNumber: number, stage: string, at: number, owner: string, staleMs: number): boolean {
    return this.db.transaction(() => {
      const row = this.db.prepare('SELECT * FROM closeouts WHERE run_id = ? AND issue_number = ?').get(runId, issueNumber) as (Row & { owner: string | null }) | undefined;
      if (!row) {
        this.db.prepare("INSERT INTO closeouts (run_id, issue_number, stage, state, owner, started_at, updated_at) VALUES (?, ?, ?, 'running', ?, ?, ?)").run(runId, issueNumber, stage, owner, at, at);
        return true;
      }
      if (row.state === 'closed') return false;
      if (row.state === 'running') {
        const holderLives = row.owner === null ? at - row.updated_at < staleMs : this.db.prepare('SELECT 1 FROM processes WHERE id = ? AND alive_until > ?').get(row.owner, at) !== undefined;
        if (holderLives) return false;
      }
      this.db.prepare("UPDATE closeouts SET state = 'running', owner = ?, attempts = attempts + 1, updated_at = ? WHERE run_id = ? AND issue_number = ?").run(owner, at, runId, issueNumber);
      return true;
    }).immediate();
  }

  finish(runId: string, issueNumber: number, outcome: { state: 'closed'; noticeCommentId: number | null } | { state: 'refused'; refusal: Refusal }, at: number): void {
    this.db
      .prepare('UPDATE closeouts SET state = ?, refusal = ?, notice_comment_id = COALESCE(?, notice_comment_id), updated_at = ? WHERE run_id = ? AND issue_number = ?')
      .run(outcome.state, outcome.state === 'refused' ? JSON.stringify(outcome.refusal) : null, outcome.state === 'closed' ? outcome.noticeCommentId : null, at, runId, issueNumber);
  }

  forRun(runId: string): Closeout[] {
    return (this.db.prepare('SELECT * FROM closeouts WHERE run_id = ? ORDER BY started_at, issue_number').all(runId) as Row[]).map(toCloseout);
  }

  /** Runs with a refused close-out (DX04: they are retried until the blocking record settles). */
  refusedRuns(): string[] {
    return (this.db.prepare("SELECT DISTINCT run_id FROM closeouts WHERE state = 'refused'").all() as { run_id: string }[]).map((r) => r.run_id);
  }
}
