import type { Timers } from './kernel/clock.js';
import { LeadershipLost, type Fence } from './kernel/fence.js';
import type { Log } from './kernel/log.js';
import type { LeaderStore } from './store/leaders.js';
import { errorStack } from './kernel/error-text.js';

// One leader for the fleet's ticks: however many yoke processes share the
// store, the scheduler, the reaper, the close-out sweep and the notice
// redelivery run on one of them. Leadership is a lease in the store, renewed
// well inside its length and checked again before every tick; when the
// leader dies, the lease lapses and the next tick of another process takes it.
// The lease runs on the database's clock, and each tick carries a fence: the
// epoch it began in, checked before each write outside the store (TR31).

export interface LeadershipPolicy {
  /** How long the lease lasts without renewal. */
  leaseMs: number;
  /** How often the leader renews it (well inside the lease). */
  renewMs: number;
}

export const DEFAULT_LEADERSHIP: LeadershipPolicy = { leaseMs: 30_000, renewMs: 10_000 };

export const TICKS_ROLE = 'ticks';

export interface LeadershipDeps {
  leaders: LeaderStore;
  processId: string;
  log: Log;
  policy: LeadershipPolicy;
}

export class Leadership {
  private leading = false;
  private epoch = 0;

  constructor(private readonly deps: LeadershipDeps) {}

  /** The last answer, without asking the store. */
  get isLeader(): boolean {
    return this.leading;
  }

  /** The epoch of the lead this process holds, as last claimed (0: it never led). */
  get leadEpoch(): number {
    return this.epoch;
  }

  /** Takes or renews the lease; true when this process leads. A store that cannot be reached leads nothing. */
  async holds(): Promise<boolean> {
    const { leaders, processId, log, policy } = this.deps;
    let lead = false;
    let holder: string | null = null;
    try {
      const leader = await leaders.claim(TICKS_ROLE, processId, policy.leaseMs);
      lead = leader.holder === processId;
      holder = leader.holder;
      if (lead) this.epoch = leader.epoch;
    } catch (err) {
      if (this.leading)
        log.warn(
          { process: processId, err: errorStack(err) },
          'could not renew the lead of the ticks; this process stops ticking until it can',
        );
    }
    if (lead && !this.leading) log.info({ process: processId }, 'this process leads the ticks');
    if (!lead && this.leading && holder)
      log.warn({ process: processId, leader: holder }, 'another process leads the ticks now');
    this.leading = lead;
    return lead;
  }

  /**
   * Takes or renews the lease, and when this process leads, the fence of this
   * epoch: what a tick checks before each write outside the store. Null when it does not lead.
   */
  async fence(): Promise<Fence | null> {
    if (!(await this.holds())) return null;
    const { leaders, processId, log } = this.deps;
    const epoch = this.epoch;
    // Once lost, lost for this tick: every later write is refused without asking again, and said once.
    let lost = false;
    return {
      epoch,
      check: async (step) => {
        if (!lost && (await leaders.stillLeads(TICKS_ROLE, processId, epoch).catch(() => false))) return;
        if (!lost)
          log.warn(
            { process: processId, epoch, step },
            'this process lost the lead mid-tick; the rest of the tick writes nothing outside the store',
          );
        lost = true;
        throw new LeadershipLost(epoch, step);
      },
    };
  }

  /** Renews every renewMs until stopped; a clean stop gives the lead up at once. */
  start(timers: Timers): { stop: () => Promise<void> } {
    const handle = timers.setInterval(() => void this.holds(), this.deps.policy.renewMs);
    return {
      stop: async () => {
        timers.clearInterval(handle);
        if (this.leading) await this.deps.leaders.release(TICKS_ROLE, this.deps.processId).catch(() => false);
        this.leading = false;
      },
    };
  }
}
