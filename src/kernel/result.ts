import { makeRefusal, type Refusal } from './codes/table.js';

// What a step that may say no answers: its value, or a refusal that says why
// and what recovers (one name for every such answer, on both halves).

export type Result<T> = { ok: true; value: T } | { ok: false; refusal: Refusal };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });

/** A refusal by its code and the facts its message names. */
export const refuse = <T = never>(...args: Parameters<typeof makeRefusal>): Result<T> => ({
  ok: false,
  refusal: makeRefusal(...args),
});

/** A refusal already made. */
export const refused = <T = never>(refusal: Refusal): Result<T> => ({ ok: false, refusal });

/**
 * The one error that carries a refusal: thrown where a refusal must unwind
 * (a write transaction rolled back, a body that cannot be read), and answered
 * with its refusal where it is caught. Contention is its kind `BusyError`.
 */
export class Refused extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.message);
  }
}

/** The one JSON shape a refusal takes on the wire: `{"error":{code,message,recovery}}`. */
export const refusalJson = (r: Refusal): { error: { code: string; message: string; recovery: string } } => ({
  error: { code: r.code, message: r.message, recovery: r.recovery },
});
