import type { Db } from './db.js';

// Plan executions: someone running a plan's cases against a stage. A
// deployment-stage execution (run on the deployment's behalf) defers its
// members' close-out until it ends (DX05).

export type ExecutionKind = 'qa-stage' | 'deployment-stage';

export interface PlanExecution {
  id: string;
  runId: string;
  stage: string;
  subject: string;
  kind: ExecutionKind;
  state: 'live' | 'ended';
  startedAt: number;
  endedAt: number | null;
  /** TR12: live only while its runner renews it; a Ctrl-C'd or lost runner's execution lapses. */
  leaseUntil: number | null;
  /** The runner's idempotency key: the same start opens one execution. */
  requestKey: string | null;
}

interface Row {
  id: string;
  run_id: string;
  stage: string;
  subject: string;
  kind: ExecutionKind;
  state: 'live' | 'ended';
  started_at: number;
  ended_at: number | null;
  lease_until: number | null;
  request_key: string | null;
}

const toExecution = (r: Row): PlanExecution => ({ id: r.id, runId: r.run_id, stage: r.stage, subject: r.subject, kind: r.kind, state: r.state, startedAt: r.started_at, endedAt: r.ended_at, leaseUntil: r.lease_until, requestKey: r.request_key });

export class ExecutionStore {
  constructor(private readonly db: Db) {}

  /** Opens an execution, or, for a key this run has already used, returns that one with its lease renewed. */
  start(e: Pick<PlanExecution, 'id' | 'runId' | 'stage' | 'subject' | 'kind'> & { at: number; leaseUntil: number; requestKey: string | null }): PlanExecution {
    return this.db.transaction(() => {
      if (e.requestKey !== null) {
        const known = this.db.prepare('SELECT * FROM plan_executions WHERE run_id = ? AND request_key = ?').get(e.runId, e.requestKey) as Row | undefined;
        if (known) {
          if (known.state === 'live') this.db.prepare('UPDATE plan_executions SET lease_until = MAX(COALESCE(lease_until, 0), ?) WHERE id = ?').run(e.leaseUntil, known.id);
          return this.get(known.id)!;
        }
      }
      this.db
        .prepare("INSERT INTO plan_executions (id, run_id, stage, subject, kind, state, started_at, lease_until, request_key) VALUES (?, ?, ?, ?, ?, 'live', ?, ?, ?)")
        .run(e.id, e.runId, e.stage, e.subject, e.kind, e.at, e.leaseUntil, e.requestKey);
      return this.get(e.id)!;
    }).immediate();
  }

  /** Extends a live execution's lease; false when it has ended. */
  renew(id: string, leaseUntil: number): boolean {
    return this.db.prepare("UPDATE plan_executions SET lease_until = MAX(COALESCE(lease_until, 0), ?) WHERE id = ? AND state = 'live'").run(leaseUntil, id).changes === 1;
  }

  /** Ends a live execution; false when it was not live. */
  end(id: string, at: number): boolean {
    return this.db.prepare("UPDATE plan_executions SET state = 'ended', ended_at = ? WHERE id = ? AND state = 'live'").run(at, id).changes === 1;
  }

  get(id: string): PlanExecution | undefined {
    const row = this.db.prepare('SELECT * FROM plan_executions WHERE id = ?').get(id) as Row | undefined;
    return row && toExecution(row);
  }

  forRun(runId: string): PlanExecution[] {
    return (this.db.prepare('SELECT * FROM plan_executions WHERE run_id = ? ORDER BY started_at, id').all(runId) as Row[]).map(toExecution);
  }

  /** TR12: executions of a stage whose lease is current at `now`; a lapsed one defers and blocks nothing. */
  live(runId: string, stage: string, now: number): PlanExecution[] {
    return (
      this.db.prepare("SELECT * FROM plan_executions WHERE run_id = ? AND stage = ? AND state = 'live' AND lease_until > ? ORDER BY started_at").all(runId, stage, now) as Row[]
    ).map(toExecution);
  }
}
