// A bound on how many things run at once: the pass's repository reads, and
// (as an Octokit plugin) GitHub requests in flight (SC01).

export interface Limiter {
  run<T>(fn: () => Promise<T>): Promise<T>;
  /** The most that were ever running at once. */
  readonly peak: number;
}

export function createLimiter(max: number): Limiter {
  let running = 0;
  let peak = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    running--;
    waiting.shift()?.();
  };
  return {
    get peak() {
      return peak;
    },
    async run<T>(fn: () => Promise<T>): Promise<T> {
      if (running >= max) await new Promise<void>((resolve) => waiting.push(resolve));
      running++;
      peak = Math.max(peak, running);
      try {
        return await fn();
      } finally {
        release();
      }
    },
  };
}

/** Runs fn over every item, at most `max` at once; resolves when all have settled. */
export async function forEachLimited<T>(
  items: readonly T[],
  max: number,
  fn: (item: T) => Promise<unknown>,
): Promise<void> {
  const limiter = createLimiter(max);
  await Promise.all(items.map((item) => limiter.run(async () => fn(item))));
}
