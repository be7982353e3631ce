// SP17: a run's calls to yoke outlast a restart of yoke. A call that never reached yoke (nothing listened: the
// connection was refused) is sent again, after 1, 2, 4 … s, for up to a minute; anything else (an answer, a connection
// that broke after the request went out) is the caller's, as before: only a request yoke never saw is sent twice.

import { fieldOf } from '../kernel/guards.js';

type Fetch = typeof fetch;

/** How long a run waits for a yoke that is not listening, in all. */
export const PATIENCE_MS = 60_000;

/** Whether a fetch failed because nothing listened where it called. */
export function neverReached(err: unknown): boolean {
  return err instanceof Error && fieldOf(err.cause, 'code') === 'ECONNREFUSED';
}

/** `f`, calling again while nothing listens, for up to `patienceMs`; `sleep` waits between tries. */
export function patientFetch(
  f: Fetch,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  patienceMs = PATIENCE_MS,
): Fetch {
  return async (input, init) => {
    let waited = 0;
    for (let delay = 1_000; ; delay = Math.min(delay * 2, 8_000)) {
      try {
        return await f(input, init);
      } catch (err) {
        if (!neverReached(err) || waited + delay > patienceMs) throw err;
        await sleep(delay);
        waited += delay;
      }
    }
  };
}
