import type { Sandbox } from '../../sandbox/sandbox.js';

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
