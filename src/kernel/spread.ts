import { createHash } from 'node:crypto';

// SC02: refreshes spread over their period by name, so a fleet read at once is not re-read at once.

/**
 * SC02: where in each period a repository's refreshes fall, from its name: the probes and re-reads of a
 * thousand repositories read at once are spread evenly over their period, not made together a period later.
 */
export function phaseOf(name: string, periodMs: number): number {
  return nameHash(name) % Math.max(1, periodMs);
}

// SC10: a name's hash, kept: a pass asks it of every repository, several times, and it never changes.
const hashes = new Map<string, number>();
const HASHES_KEPT = 200_000;

function nameHash(name: string): number {
  let h = hashes.get(name);
  if (h === undefined) {
    h = createHash('sha1').update(name.toLowerCase()).digest().readUInt32BE(0);
    if (hashes.size >= HASHES_KEPT) hashes.clear();
    hashes.set(name, h);
  }
  return h;
}

/** Whether a refresh made at `at` is due again at `now`: a slot of the period, at the repository's phase, began since. */
export function dueSince(name: string, at: number, now: number, periodMs: number): boolean {
  if (periodMs <= 0) return true;
  const phase = phaseOf(name, periodMs);
  return Math.floor((now + phase) / periodMs) > Math.floor((at + phase) / periodMs);
}

/** A `Date` header's time one second back, as GitHub's `since` takes it (one-second precision), or null. */
export function secondBefore(date: unknown): string | null {
  const at = Date.parse(String(date ?? ''));
  return Number.isFinite(at) ? new Date(at - 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') : null;
}
