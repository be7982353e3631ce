import nock from 'nock';
import { afterAll, vi } from 'vitest';

// The unit files share their worker (vitest.config.ts: isolate off), so each
// file leaves the worker as it found it: no mock, the network as nock found
// it, real timers.
afterAll(() => {
  nock.cleanAll();
  nock.enableNetConnect();
  vi.useRealTimers();
  vi.restoreAllMocks();
});
