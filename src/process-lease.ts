import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Clock, Timers } from './clock.js';
import type { Log } from './log.js';
import type { Store } from './store/store.js';

// TR12: each yoke process (the server, the database door) holds a lease in
// the store and renews it. What a process holds (dispatch reservations,
// close-out claims) belongs to it while the lease lives, and is freed when
// the lease lapses, never by another process's start. On one host a process
// whose pid is gone is known dead at once, so a restart takes over what it held.

export interface ProcessLeasePolicy {
  /** How long a lease lasts without renewal. */
  leaseMs: number;
  /** How often it is renewed (well inside the lease). */
  renewMs: number;
}

export const DEFAULT_PROCESS_LEASE: ProcessLeasePolicy = { leaseMs: 30_000, renewMs: 10_000 };

export const newProcessId = (): string => `p-${randomBytes(6).toString('hex')}`;

/** Whether a pid names a running process on this host. */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface ProcessLeaseDeps {
  store: Store;
  clock: Clock;
  timers: Timers;
  log: Log;
  /** This host's name and pid, and how to tell whether another pid here runs (injected in tests). */
  host?: string;
  pid?: number;
  isPidAlive?: (pid: number) => boolean;
}

/** Ends the leases of this host's processes that are no longer running, and fails what they left in flight. */
export async function reapDeadProcesses(deps: ProcessLeaseDeps, selfId: string): Promise<string[]> {
  const host = deps.host ?? hostname();
  const alive = deps.isPidAlive ?? pidAlive;
  const now = deps.clock.now();
  const dead = (await deps.store.processes.living(now)).filter((p) => p.id !== selfId && p.host === host && p.pid !== (deps.pid ?? process.pid) && !alive(p.pid));
  for (const p of dead) await deps.store.processes.end(p.id);
  const failed = await deps.store.dispatchRequests.failLapsed(now);
  if (dead.length || failed) deps.log.info({ dead: dead.map((p) => `${p.id} (pid ${p.pid})`), failed }, 'freed what stopped yoke processes held');
  return dead.map((p) => p.id);
}

export interface ProcessLease {
  id: string;
  stop(): Promise<void>;
}

/** Registers this process, frees what dead ones held, and renews the lease until stopped. */
export async function startProcessLease(deps: ProcessLeaseDeps, policy: ProcessLeasePolicy, id: string = newProcessId()): Promise<ProcessLease> {
  await deps.store.processes.register({ id, host: deps.host ?? hostname(), pid: deps.pid ?? process.pid, at: deps.clock.now(), leaseMs: policy.leaseMs });
  await reapDeadProcesses(deps, id);
  const renew = async () => {
    try {
      if (!(await deps.store.processes.renew(id, deps.clock.now(), policy.leaseMs))) deps.log.warn({ process: id }, 'this process\'s lease was ended by another; what it held may be taken over');
      await reapDeadProcesses(deps, id);
    } catch (err) {
      deps.log.warn({ err: String(err) }, 'could not renew this process\'s lease');
    }
  };
  const handle = deps.timers.setInterval(() => void renew(), policy.renewMs);
  return {
    id,
    stop: async () => {
      deps.timers.clearInterval(handle);
      await deps.store.processes.end(id);
    },
  };
}
