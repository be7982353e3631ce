import { createHash } from 'node:crypto';
import type { Store } from '../../store/store.js';

// SC08: the reading of the fleet, spread over the live yoke processes by installation (GitHub's limits are per
// installation). Which process should read which installation is a pure function of the two sets; each process
// then keeps its own leases to match (keepReaders), so an installation is read by exactly one process at a time,
// and a dead process's installations move once its process lease, or theirs, lapses.

/** How one process's reading is placed: what it should read, and what its leases say it reads now. */
export interface ReadersPlan {
  /** Installation ids to release: held here, but another process's to read (or no longer listed). */
  release: number[];
  /** Installation ids to take or renew: this process's to read. */
  claim: number[];
}

/** A process's place in the ranking of one installation: highest first (rendezvous hashing). */
const score = (installationId: number, processId: string): string =>
  createHash('sha256').update(`${installationId}:${processId}`).digest('hex');

/**
 * Pure: which process reads each installation. Balanced, each process reading ⌊n/p⌋ or ⌈n/p⌉ installations (the
 * first n mod p processes by id the larger share), each installation going to the process that ranks it highest
 * with room left: the same sets give the same answer on every process, and a process joining or leaving moves
 * about a p-th of the installations, not all of them.
 */
export function assignReaders(installations: readonly number[], processes: readonly string[]): Map<number, string> {
  const procs = [...new Set(processes)].sort();
  const ids = [...new Set(installations)].sort((a, b) => a - b);
  const out = new Map<number, string>();
  if (procs.length === 0) return out;
  const base = Math.floor(ids.length / procs.length);
  const room = new Map(procs.map((p, i) => [p, base + (i < ids.length % procs.length ? 1 : 0)]));
  for (const id of ids) {
    const ranked = [...procs].sort((a, b) => (score(id, a) < score(id, b) ? 1 : -1));
    const to = ranked.find((p) => room.get(p)! > 0)!;
    room.set(to, room.get(to)! - 1);
    out.set(id, to);
  }
  return out;
}

/** Pure: what `self` releases and claims, from the assignment and the installations it holds now. */
export function planReaders(self: string, assigned: ReadonlyMap<number, string>, held: readonly number[]): ReadersPlan {
  const mine = [...assigned].filter(([, p]) => p === self).map(([id]) => id);
  return { release: held.filter((id) => assigned.get(id) !== self), claim: mine };
}

/**
 * One tick of this process's reading: the live reading processes and the installations GitHub lists in, its leases out,
 * released before any is claimed. Returns the installations it holds now (what it reads until the next tick); one
 * another process still holds is taken at a later tick, once that one lets it go or its lease lapses.
 */
export async function keepReaders(
  store: Pick<Store, 'processes' | 'installationLeases'>,
  self: string,
  installations: readonly number[],
  leaseMs: number,
): Promise<number[]> {
  // Only processes that read count (a database door registers a lease and reads nothing).
  const readers = (await store.processes.readers()).map((p) => p.id);
  const assigned = assignReaders(installations, [...readers, self]);
  const plan = planReaders(self, assigned, await store.installationLeases.heldBy(self));
  for (const id of plan.release) await store.installationLeases.release(id, self);
  const held: number[] = [];
  for (const id of plan.claim) if (await store.installationLeases.claim(id, self, leaseMs)) held.push(id);
  return held;
}
