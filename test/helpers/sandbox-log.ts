import { afterEach, expect } from 'vitest';
import { Sandbox, type SandboxOptions } from '../../sandbox/sandbox.js';

/**
 * yoke's warnings and errors in a sandbox that no test claimed: each test
 * that provokes one names it here (and asserts on it where it provokes it),
 * so a passing run prints nothing and hides nothing.
 */
export function unclaimedWarnings(s: Sandbox | undefined, claimed: readonly string[] = []): string[] {
  if (!s) return [];
  return s
    .logged('warn')
    .filter((l) => !claimed.some((c) => l.msg.includes(c)))
    .map(
      (l) =>
        `${l.msg}${['reason', 'author', 'err'].map((k) => (l[k] ? ` ${k}=${String(typeof l[k] === 'object' ? JSON.stringify(l[k]) : l[k]).split('\n')[0]}` : '')).join('')}`,
    );
}

/**
 * A sandbox per test: `start(options)` makes and starts it; after each test it
 * is stopped, and its log held no warning or error that no test here claimed.
 */
export function sandboxPerTest(claimed: readonly string[] = []): { start(opts: SandboxOptions): Promise<Sandbox> } {
  let current: Sandbox | null = null;
  afterEach(async () => {
    const unclaimed = unclaimedWarnings(current ?? undefined, claimed);
    await current?.stop();
    current = null;
    expect(unclaimed).toEqual([]);
  });
  return {
    async start(opts) {
      current = new Sandbox(opts);
      await current.start();
      return current;
    },
  };
}
