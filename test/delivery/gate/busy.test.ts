import { describe, expect, it } from 'vitest';
import { BusyError, refusedError } from '../../../src/delivery/gate/busy.js';
import { makeRefusal } from '../../../src/kernel/codes/table.js';
import { Refused, refusalJson } from '../../../src/kernel/result.js';

// One error carries a refusal (Refused); contention is its kind BusyError,
// and nothing that is not contention may be thrown as one.

describe('refusals that unwind', () => {
  it('DX12 a busy answer is a BusyError only at a contention point; anything else is Refused', () => {
    const busy = makeRefusal('run_busy', { run: 'dr-1', holder: 'request r1 of driver-a' });
    const reused = makeRefusal('idempotency_key_reused', { request: 'r1' });
    expect(refusedError(busy)).toBeInstanceOf(BusyError);
    expect(refusedError(reused)).toBeInstanceOf(Refused);
    expect(refusedError(reused)).not.toBeInstanceOf(BusyError);
    expect(() => new BusyError(reused)).toThrow(
      'idempotency_key_reused is not contention: throw Refused, not BusyError',
    );
  });

  it('a refusal has one JSON shape on the wire', () => {
    const r = makeRefusal('idempotency_key_reused', { request: 'r1' });
    expect(refusalJson(r)).toEqual({ error: { code: r.code, message: r.message, recovery: r.recovery } });
  });
});
