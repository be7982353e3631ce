import type { Sql } from '../sql/sql.js';
import { TABLES, type TableRow } from '../tables.js';

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

type Row = TableRow<'plan_executions'>;

const toExecution = (r: Row): PlanExecution => ({
  id: r.id,
  runId: r.run_id,
  stage: r.stage,
  subject: r.subject,
  kind: r.kind,
  state: r.state,
  startedAt: r.started_at,
  endedAt: r.ended_at,
  leaseUntil: r.lease_until,
  requestKey: r.request_key,
});

/** A lease only ever moves later (portable: SQLite's two-argument MAX is not PostgreSQL's). */
const LATER_LEASE = 'lease_until = CASE WHEN COALESCE(lease_until, 0) > ? THEN lease_until ELSE ? END';

export class ExecutionStore {
  constructor(private readonly sql: Sql) {}

  /** Opens an execution, or, for a key this run has already used, returns that one with its lease renewed. */
  start(
    e: Pick<PlanExecution, 'id' | 'runId' | 'stage' | 'subject' | 'kind'> & {
      at: number;
      leaseUntil: number;
      requestKey: string | null;
    },
  ): Promise<PlanExecution> {
    return this.sql.transaction(async (tx) => {
      if (e.requestKey !== null) {
        const known = await tx.get(
          TABLES.plan_executions,
          'SELECT * FROM plan_executions WHERE run_id = ? AND request_key = ?',
          [e.runId, e.requestKey],
        );
        if (known) {
          if (known.state === 'live')
            await tx.run(`UPDATE plan_executions SET ${LATER_LEASE} WHERE id = ?`, [
              e.leaseUntil,
              e.leaseUntil,
              known.id,
            ]);
          return toExecution(
            (await tx.get(TABLES.plan_executions, 'SELECT * FROM plan_executions WHERE id = ?', [known.id]))!,
          );
        }
      }
      await tx.run(
        "INSERT INTO plan_executions (id, run_id, stage, subject, kind, state, started_at, lease_until, request_key) VALUES (?, ?, ?, ?, ?, 'live', ?, ?, ?)",
        [e.id, e.runId, e.stage, e.subject, e.kind, e.at, e.leaseUntil, e.requestKey],
      );
      return toExecution((await tx.get(TABLES.plan_executions, 'SELECT * FROM plan_executions WHERE id = ?', [e.id]))!);
    });
  }

  /** Extends a live execution's lease; false when it has ended. */
  async renew(id: string, leaseUntil: number): Promise<boolean> {
    return (
      (
        await this.sql.run(`UPDATE plan_executions SET ${LATER_LEASE} WHERE id = ? AND state = 'live'`, [
          leaseUntil,
          leaseUntil,
          id,
        ])
      ).changes === 1
    );
  }

  /** Ends a live execution; false when it was not live. */
  async end(id: string, at: number): Promise<boolean> {
    return (
      (
        await this.sql.run("UPDATE plan_executions SET state = 'ended', ended_at = ? WHERE id = ? AND state = 'live'", [
          at,
          id,
        ])
      ).changes === 1
    );
  }

  async get(id: string): Promise<PlanExecution | undefined> {
    const row = await this.sql.get(TABLES.plan_executions, 'SELECT * FROM plan_executions WHERE id = ?', [id]);
    return row && toExecution(row);
  }

  async forRun(runId: string): Promise<PlanExecution[]> {
    return (
      await this.sql.all(
        TABLES.plan_executions,
        'SELECT * FROM plan_executions WHERE run_id = ? ORDER BY started_at, id',
        [runId],
      )
    ).map(toExecution);
  }

  /** TR12: executions of a stage whose lease is current at `now`; a lapsed one defers and blocks nothing. */
  async live(runId: string, stage: string, now: number): Promise<PlanExecution[]> {
    return (
      await this.sql.all(
        TABLES.plan_executions,
        "SELECT * FROM plan_executions WHERE run_id = ? AND stage = ? AND state = 'live' AND lease_until > ? ORDER BY started_at",
        [runId, stage, now],
      )
    ).map(toExecution);
  }
}
