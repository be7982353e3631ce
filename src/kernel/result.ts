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
