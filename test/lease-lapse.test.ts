import { describe, expect, it } from 'vitest';
import type { Timers } from '../src/kernel/clock.js';
import { EX_TEMPFAIL, leaseLapsedStopMessage, serveYoke, stoppedMessage } from '../src/main.js';
import { leaseLapsedMessage, localIdentity, startProcessLease } from '../src/process-lease.js';
import type { StartedYoke } from '../src/server.js';
import { ManualClock, recordingLog } from './helpers/fleet.js';
import { testStore } from './helpers/test-store.js';
import { EventEmitter } from 'node:events';

// TR12: a process whose lease lapsed (it stalled past it, or another process found it gone) has had what it held
// taken over. `yoke serve` then stops, with EX_TEMPFAIL, for its service manager to start it again under a new
// lease; before, it said "restart this yoke" every ten seconds and served on, out of the reading for good.

/** Timers whose intervals run when the test says. */
function steppedTimers(): Timers & { fire(): Promise<void> } {
  const fns: (() => void)[] = [];
  return {
    setInterval: (fn) => fns.push(fn),
    clearInterval: () => {},
    async fire() {
      for (const f of fns) f();
      await new Promise((r) => setTimeout(r, 20));
    },
  };
}

describe('TR12 a lapsed process lease', () => {
  it('is said on each renewal, and what the process does about it is done once', async () => {
    const clock = new ManualClock();
    const store = testStore(clock);
    const timers = steppedTimers();
    const lines: string[] = [];
    let stops = 0;
    const policy = { leaseMs: 30_000, renewMs: 10_000 };
    const lease = await startProcessLease(
      { store, clock, timers, log: recordingLog(lines), identity: localIdentity(), onLapsed: () => stops++ },
      policy,
    );
    await timers.fire();
    expect([lines, stops]).toEqual([[], 0]);
    // Another process found it gone (or it stalled past its lease): its lease is ended under it.
    await store.processes.end(lease.id);
    await timers.fire();
    await timers.fire();
    expect(lines.filter((l) => l.startsWith('error:'))).toEqual([
      `error: ${leaseLapsedMessage(true)}`,
      `error: ${leaseLapsedMessage(true)}`,
    ]);
    expect(stops).toBe(1);
    expect(leaseLapsedMessage(true)).toMatch(/yoke stops, for its service manager to start it again$/);
    expect(leaseLapsedMessage(false)).toMatch(/restart this yoke$/);
    await store.close();
  });

  it('stops `yoke serve`, which says why and exits EX_TEMPFAIL for its service manager; a signal still stops it with 0', async () => {
    const serve = async (cause: 'lapse' | 'SIGTERM') => {
      const signals = new EventEmitter();
      const said: string[] = [];
      let stopped = 0;
      const start = (_env: Record<string, string | undefined>, opts?: { onLeaseLapsed?: () => void }) => {
        setTimeout(() => (cause === 'lapse' ? opts?.onLeaseLapsed?.() : signals.emit('SIGTERM')), 10);
        return Promise.resolve({ stop: () => Promise.resolve(void stopped++) } as unknown as StartedYoke);
      };
      const code = await serveYoke({}, { err: (l) => said.push(l), signals, start });
      return { code, said, stopped };
    };
    expect(await serve('lapse')).toEqual({ code: EX_TEMPFAIL, said: [leaseLapsedStopMessage()], stopped: 1 });
    expect(await serve('SIGTERM')).toEqual({ code: 0, said: [stoppedMessage('SIGTERM')], stopped: 1 });
    expect(EX_TEMPFAIL).toBe(75);
  });
});
