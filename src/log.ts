/** The slice of a pino logger yoke uses, so tests can pass a silent one. */
export interface Log {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLog: Log = { info: () => {}, warn: () => {}, error: () => {} };

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** Timers are injected so tick schedules are tested with a fake clock. */
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
