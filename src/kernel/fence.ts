// TR31: a leader's fence. A leader that stalls past its lease (a long pause,
// a cut connection) may wake mid-tick while another process leads; before
// each step of a tick that writes outside the store (a launch, a comment, a
// merge, an approval) it checks that it still leads in the epoch it started
// the tick with, by the database's clock, and stops the tick when it does not.

export interface Fence {
  /** The leadership epoch this fence guards ('open' for a yoke that leads alone). */
  readonly epoch: number | 'open';
  /** Resolves when this process still leads in that epoch; rejects with LeadershipLost, naming the step, when not. */
  check(step: string): Promise<void>;
}

export class LeadershipLost extends Error {
  constructor(
    readonly epoch: number | 'open',
    readonly step: string,
  ) {
    super(`this process no longer leads the ticks (it started this tick in epoch ${epoch}); it stopped before ${step}`);
    this.name = 'LeadershipLost';
  }
}

/** The fence of a yoke that leads alone (no leadership configured): it always passes. */
export const OPEN_FENCE: Fence = { epoch: 'open', check: async () => {} };
