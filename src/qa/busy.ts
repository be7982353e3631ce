import { makeRefusal, type Refusal } from '../codes.js';

// Busy answers (DX12): each raised at a real contention point, inside the
// transaction that met it, so the refusal is answered after it rolled back (DX13).

export const BUSY_CODES = [
  'run_busy',
  'qa_plan_busy',
  'qa_checkin_busy',
  'qa_ownership_busy',
  'deployment_start_lock_busy',
  'deployment_membership_changed',
  'lock_timeout',
  'statement_cancelled',
  'idempotency_request_in_flight',
] as const;
export type BusyCode = (typeof BUSY_CODES)[number];

export const isBusyCode = (code: string): code is BusyCode => (BUSY_CODES as readonly string[]).includes(code);

export class BusyError extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.message);
  }
}

/** SQLite's own contention, as a busy answer: a busy timeout, or an interrupted statement. */
export function sqliteBusy(err: unknown): Refusal | null {
  const code = (err as { code?: unknown })?.code;
  const detail = err instanceof Error ? err.message : String(err);
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return makeRefusal('lock_timeout', { detail });
  if (code === 'SQLITE_INTERRUPT') return makeRefusal('statement_cancelled', { detail });
  return null;
}
