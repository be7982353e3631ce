import type { Clock, Timers } from './clock.js';
import type { Log } from './log.js';
import type { LeaderStore } from './store/leaders.js';

// One leader for the fleet's ticks: however many yoke processes share the
// store, the scheduler, the reaper, the close-out sweep and the notice
// redelivery run on one of them. Leadership is a lease in the store, renewed
// well inside its length and checked again before every tick; when the
// leader dies, the lease lapses and the next tick of another process takes it.

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
  clock: Clock;
  log: Log;
  policy: LeadershipPolicy;
}

export class Leadership {
  private leading = false;

  constructor(private readonly deps: LeadershipDeps) {}

  /** The last answer, without asking the store. */
  get isLeader(): boolean {
    return this.leading;
  }

  /** Takes or renews the lease; true when this process leads. A store that cannot be reached leads nothing. */
  async holds(): Promise<boolean> {
    const { leaders, processId, clock, log, policy } = this.deps;
    let lead = false;
    let holder: string | null = null;
    try {
      const now = clock.now();
      const leader = await leaders.claim(TICKS_ROLE, processId, now, policy.leaseMs);
      lead = leader.holder === processId;
      holder = leader.holder;
    } catch (err) {
      if (this.leading) log.warn({ process: processId, err: String(err) }, 'could not renew the lead of the ticks; this process stops ticking until it can');
    }
    if (lead && !this.leading) log.info({ process: processId }, 'this process leads the ticks');
    if (!lead && this.leading && holder) log.warn({ process: processId, leader: holder }, 'another process leads the ticks now');
    this.leading = lead;
    return lead;
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
