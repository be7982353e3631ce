import type { Sql } from '../sql/sql.js';
import { ownerGone } from '../processes.js';
import { TABLES, type TableRow } from '../tables.js';

// DX07/DX10: dispatch request ids. A reservation is made in the transaction
// that starts the work; a completed one is replayed as recorded; a failed one
// may be tried again; an in-flight one answers its copies at once.

export interface DispatchRequest {
  requestId: string;
  runId: string;
  stage: string;
  envelopeHash: string;
  driver: string;
  /** TR12: the yoke process running it; only its lapse frees an in-flight reservation. */
  owner: string | null;
  state: 'in_flight' | 'completed' | 'failed';
  status: number | null;
  response: string | null;
  detail: string | null;
  attempts: number;
  createdAt: number;
  updatedAt: number;
}

type Row = TableRow<'dispatch_requests'>;

const toRequest = (r: Row): DispatchRequest => ({
  requestId: r.request_id,
  runId: r.run_id,
  stage: r.stage,
  envelopeHash: r.envelope_hash,
  driver: r.driver,
  owner: r.owner,
  state: r.state,
  status: r.status,
  response: r.response,
  detail: r.detail,
  attempts: r.attempts,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export class DispatchRequestStore {
  constructor(
    private readonly sql: Sql,
    /** The database's clock, which process leases compare (TR31). */
    private readonly leaseNow: () => Promise<number>,
  ) {}

  async get(requestId: string): Promise<DispatchRequest | undefined> {
    const row = await this.sql.get(TABLES.dispatch_requests, 'SELECT * FROM dispatch_requests WHERE request_id = ?', [
      requestId,
    ]);
    return row && toRequest(row);
  }

  /** Another request of the run still in flight (run_busy), if any. */
  async inFlightFor(runId: string, except: string): Promise<DispatchRequest | undefined> {
    const row = await this.sql.get(
      TABLES.dispatch_requests,
      "SELECT * FROM dispatch_requests WHERE run_id = ? AND state = 'in_flight' AND request_id <> ?",
      [runId, except],
    );
    return row && toRequest(row);
  }

  /** Reserves a new id, or takes a failed one again. The caller holds the write transaction. */
  async reserve(r: {
    requestId: string;
    runId: string;
    stage: string;
    envelopeHash: string;
    driver: string;
    owner: string;
    at: number;
  }): Promise<void> {
    await this.sql.run(
      `INSERT INTO dispatch_requests (request_id, run_id, stage, envelope_hash, driver, owner, state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'in_flight', ?, ?)
       ON CONFLICT (request_id) DO UPDATE SET state = 'in_flight', owner = excluded.owner, status = NULL, response = NULL, detail = NULL,
         attempts = dispatch_requests.attempts + 1, updated_at = excluded.updated_at`,
      [r.requestId, r.runId, r.stage, r.envelopeHash, r.driver, r.owner, r.at, r.at],
    );
  }

  /**
   * TR12: records a reserved request's result, only for the process that holds the reservation while it is
   * in flight: one that stalled past its lease, whose reservation was failed and taken again, changes nothing.
   */
  async complete(requestId: string, status: number, response: string, at: number, owner: string): Promise<boolean> {
    const done = await this.sql.run(
      "UPDATE dispatch_requests SET state = 'completed', status = ?, response = ?, updated_at = ? WHERE request_id = ? AND state = 'in_flight' AND owner = ?",
      [status, response, at, requestId, owner],
    );
    return done.changes === 1;
  }

  /** TR12: fails a reserved request, as `complete` records one: only for the process that holds the reservation. */
  async fail(requestId: string, detail: string, at: number, owner: string): Promise<boolean> {
    const done = await this.sql.run(
      "UPDATE dispatch_requests SET state = 'failed', detail = ?, updated_at = ? WHERE request_id = ? AND state = 'in_flight' AND owner = ?",
      [detail, at, requestId, owner],
    );
    return done.changes === 1;
  }

  /**
   * TR12: reservations whose process is gone can never finish, so they may be
   * tried again. A reservation of a process that still holds its lease (the
   * live server, seen from the database door, or the other way round) is never touched.
   */
  async failLapsed(at: number): Promise<number> {
    return (
      await this.sql.run(
        `UPDATE dispatch_requests SET state = 'failed', detail = 'the yoke process running it stopped before it recorded a result', updated_at = ? WHERE state = 'in_flight' AND ${ownerGone('owner', '?')}`,
        [at, await this.leaseNow()],
      )
    ).changes;
  }
}
