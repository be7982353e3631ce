// Time is injected: a pass reads the clock it was given, and tick schedules
// are tested with a fake clock and fake timers, never real sleeps.

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export interface Timers {
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

export const systemTimers: Timers = {
  setInterval: (fn, ms) => {
    const h = setInterval(fn, ms);
    h.unref?.();
    return h;
  },
  clearInterval: (h) => clearInterval(h as NodeJS.Timeout),
};

/** Midnight UTC of the day `now` falls in: spend limits and totals count from there. */
export const utcDayStart = (now: number): number => now - (now % 86_400_000);
