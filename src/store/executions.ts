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
}

const toExecution = (r: Row): PlanExecution => ({ id: r.id, runId: r.run_id, stage: r.stage, subject: r.subject, kind: r.kind, state: r.state, startedAt: r.started_at, endedAt: r.ended_at });

export class ExecutionStore {
  constructor(private readonly db: Db) {}

  start(e: Pick<PlanExecution, 'id' | 'runId' | 'stage' | 'subject' | 'kind'> & { at: number }): void {
    this.db.prepare("INSERT INTO plan_executions (id, run_id, stage, subject, kind, state, started_at) VALUES (?, ?, ?, ?, ?, 'live', ?)").run(e.id, e.runId, e.stage, e.subject, e.kind, e.at);
  }

  /** Ends a live execution; false when it was not live. */
  end(id: string, at: number): boolean {
    return this.db.prepare("UPDATE plan_executions SET state = 'ended', ended_at = ? WHERE id = ? AND state = 'live'").run(at, id).changes === 1;
  }

  get(id: string): PlanExecution | undefined {
    const row = this.db.prepare('SELECT * FROM plan_executions WHERE id = ?').get(id) as Row | undefined;
    return row && toExecution(row);
  }

  live(runId: string, stage: string): PlanExecution[] {
    return (this.db.prepare("SELECT * FROM plan_executions WHERE run_id = ? AND stage = ? AND state = 'live' ORDER BY started_at").all(runId, stage) as Row[]).map(toExecution);
  }
}
