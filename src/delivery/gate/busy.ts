import { fieldOf, isOneOf } from '../../kernel/guards.js';
import { makeRefusal, type Refusal } from '../../kernel/codes/table.js';
import { errorText } from '../../kernel/error-text.js';
import { Refused } from '../../kernel/result.js';

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

export const isBusyCode = (code: string): code is BusyCode => isOneOf(BUSY_CODES, code);

/** A refusal at a contention point (one of BUSY_CODES): the work may be asked for again once its holder is done. */
export class BusyError extends Refused {
  constructor(refusal: Refusal) {
    if (!isBusyCode(refusal.code)) throw new Error(`${refusal.code} is not contention: throw Refused, not BusyError`);
    super(refusal);
  }
}

/** A refusal to unwind with: BusyError when it is contention, Refused otherwise. */
export const refusedError = (refusal: Refusal): Refused =>
  isBusyCode(refusal.code) ? new BusyError(refusal) : new Refused(refusal);

/**
 * The database's own contention, as a busy answer, with the names the source
 * document uses. SQLite: a busy timeout or a locked table (`SQLITE_BUSY`,
 * `SQLITE_LOCKED`), an interrupted statement. PostgreSQL: `lock_not_available`
 * (55P03, from lock_timeout) and `query_canceled` (57014, from
 * statement_timeout). Anything else is not contention: null.
 */
export function storeBusy(err: unknown): Refusal | null {
  const code = fieldOf(err, 'code');
  const detail = errorText(err);
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED' || code === '55P03')
    return makeRefusal('lock_timeout', { detail });
  if (code === 'SQLITE_INTERRUPT' || code === '57014') return makeRefusal('statement_cancelled', { detail });
  return null;
}
