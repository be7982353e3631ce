import { sweepCloseouts } from './delivery/gate/check.js';
import { syncQaLabels } from './delivery/gate/labels.js';
import { sweepEnvironments } from './delivery/deployments/environment-check.js';
import { sweepProtectionReviews, sweepWaitingRuns } from './delivery/deployments/protection-rule.js';
import type { FleetContext } from './fleet/context.js';
import type { Engine } from './fleet/engine/engine.js';
import { fencedForge } from './forge/fenced.js';
import type { Timers } from './kernel/clock.js';
import { LeadershipLost, OPEN_FENCE, type Fence } from './kernel/fence.js';
import type { Log } from './kernel/log.js';
import type { Leadership } from './leadership.js';
import { errorStack } from './kernel/error-text.js';

// What runs by itself, on the clock, and who may run it: the engine's ticks
// (the spawn pass and the reaper), the reaps a webhook or a run's exit asks
// for, and the sweeps of the delivery half. Only the leader ticks, reaps and
// sweeps, each behind its fence (TR31); a process that never ticks (the
// database door) sweeps what it drives under an open fence.

/** SC08: an installation's lease lasts this many scheduler ticks without renewal (its reader renews it every tick). */
export const READ_LEASE_TICKS = 3;

/** DP05: how often each repository's gated environments are read again for yoke's rule. */
const ENVIRONMENT_CHECK_MS = 10 * 60_000;

export interface TicksOptions {
  engine: Engine;
  leadership: Leadership;
  timers: Timers;
  log: Log;
  /** Whether this process ticks at all (false: tests driving passes by hand, and the database door). */
  ticking: boolean;
  /** The reaper's cadence, which the sweeps keep too. */
  reaperMs: number;
  /** With no inbound connection, runs waiting at yoke's protection rule are found by polling. */
  pollWaitingRuns: boolean;
}

export class Ticks {
  private readonly fleet: FleetContext;
  private sweepTimer: unknown = null;
  private sweeping = false;
  /** The sweep in flight (or the last one), which a stop waits for. */
  private sweep: Promise<void> = Promise.resolve();
  private renewing: { stop(): Promise<void> } | null = null;
  private readingTimer: unknown = null;
  private reading: Promise<void> = Promise.resolve();

  constructor(private readonly o: TicksOptions) {
    this.fleet = o.engine.context();
  }

  /** Starts leading (when this process ticks), the engine's ticks and the sweeps; recovers first: reaps what ended while yoke was down. */
  start(): void {
    if (this.o.ticking) {
      this.renewing = this.o.leadership.start(this.o.timers);
      this.o.engine.start();
      void this.o.leadership.fence().then((fence) => this.reapUnder(fence));
      this.startReading();
    }
    this.sweepTimer = this.o.timers.setInterval(() => void this.sweepOnce(), this.o.reaperMs);
  }

  /**
   * SC08/SC09: every ticking process reads its share of the installations, on the scheduler's tick, and shares
   * what it found for the pass; a view a webhook on another process wanted, once shared, kicks a pass at once.
   */
  private startReading(): void {
    const reading = this.o.engine.reading(READ_LEASE_TICKS * this.fleet.policy.tickMs);
    let busy = false;
    const tick = () => {
      if (busy) return;
      busy = true;
      // In turn with this process's passes, which read the same installations through the same views: whichever
      // comes second finds them fresh, and GitHub is asked once.
      this.reading = this.o.engine.lock
        .run(async () => (this.o.engine.stopping.signal.aborted ? { wanted: 0 } : reading.tick()))
        .then(
          (done) => {
            if (done.wanted) this.fleet.kick();
          },
          (err: unknown) => {
            if (!this.o.engine.stopping.signal.aborted)
              this.o.log.warn({ err: errorStack(err) }, 'reading tick failed; the next tick reads again');
          },
        )
        .finally(() => (busy = false));
    };
    void reading
      .start()
      .then(tick, (err: unknown) =>
        this.o.log.warn({ err: errorStack(err) }, 'could not mark this process as a reader; it reads nothing'),
      );
    this.readingTimer = this.o.timers.setInterval(tick, this.fleet.policy.tickMs);
  }

  /** TR13: a webhook asks for a reap; only the leader reaps (a follower's pass would launch too). */
  reapIfLeading(): void {
    void this.o.leadership.fence().then(
      (fence) => this.reapUnder(fence),
      (err: unknown) => this.o.log.error({ err: errorStack(err) }, 'could not ask who leads'),
    );
  }

  /** A run's process exited (the command launcher): reap now, whoever leads. */
  reapNow(): void {
    void this.o.engine.reaperTick().catch((err) => this.o.engine.failed('reaper pass failed', err));
  }

  private reapUnder(fence: Fence | null): void {
    if (!fence) return;
    void this.o.engine
      .reaperTick(fence)
      .catch((err: unknown) => err instanceof LeadershipLost || this.o.engine.failed('reaper pass failed', err));
  }

  /**
   * DX04/DX06: skipped and refused close-outs are tried again by themselves; a qa: label whose webhook was
   * lost is found by reading what changed; environments and protection reviews are read again. One sweep at
   * a time: a sweep still running when the next is due is not doubled.
   */
  sweepOnce(): Promise<void> {
    if (this.sweeping) return this.sweep;
    this.sweeping = true;
    this.sweep = this.sweepLed().finally(() => (this.sweeping = false));
    return this.sweep;
  }

  private async sweepLed(): Promise<void> {
    try {
      const fence = this.o.ticking ? await this.o.leadership.fence() : OPEN_FENCE;
      if (!fence) return;
      const fenced = { ...this.fleet, forge: fencedForge(this.fleet.forge, fence) };
      await sweepCloseouts(fenced);
      await syncQaLabels(fenced);
      await sweepEnvironments(fenced, ENVIRONMENT_CHECK_MS);
      await sweepProtectionReviews(fenced);
      if (this.o.pollWaitingRuns) await sweepWaitingRuns(fenced);
    } catch (err) {
      // A sweep cut short by yoke's stop is no failure: the next leader's sweep goes on from the store.
      if (!(err instanceof LeadershipLost) && !this.o.engine.stopping.signal.aborted)
        this.o.log.warn({ err: errorStack(err) }, 'close-out sweep failed');
    }
  }

  /**
   * Stops ticking, quickly: the pass in flight stops at its next step under its lead (its write in flight
   * finishes; giving the lead up first would fence it off), queued passes are dropped (SP10: whoever leads
   * next re-derives them), and the lead is given up at once so another yoke takes it at its next tick. A pass
   * or sweep still running after STOP_WAIT_MS is left behind: the lead is given up anyway, and its writes
   * outside the store are fenced off (TR31).
   */
  async stop(): Promise<void> {
    this.o.engine.stop();
    if (this.sweepTimer !== null) this.o.timers.clearInterval(this.sweepTimer);
    if (this.readingTimer !== null) this.o.timers.clearInterval(this.readingTimer);
    const settled = await within(
      Promise.all([this.o.engine.lock.run(async () => {}), this.sweep, this.reading]),
      STOP_WAIT_MS,
      this.o.timers,
    );
    if (!settled)
      this.o.log.warn(
        { waitedMs: STOP_WAIT_MS },
        'a pass or sweep was still running when yoke stopped; the lead is given up anyway, and the next leader re-derives what it was doing',
      );
    await this.renewing?.stop();
  }
}

/** How long a stop waits for the pass and sweep in flight before it gives the lead up anyway. */
export const STOP_WAIT_MS = 3_000;

/** Whether `work` settled within `ms` on these timers. */
async function within(work: Promise<unknown>, ms: number, timers: Timers): Promise<boolean> {
  let handle: unknown = null;
  const late = new Promise<false>((resolve) => {
    handle = timers.setInterval(() => resolve(false), ms);
  });
  try {
    return await Promise.race([
      work.then(
        () => true as const,
        () => true as const,
      ),
      late,
    ]);
  } finally {
    timers.clearInterval(handle);
  }
}
