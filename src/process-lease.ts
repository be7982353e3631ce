import { randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Clock, Timers } from './kernel/clock.js';
import type { Log } from './kernel/log.js';
import type { Store } from './store/store.js';
import { errorStack } from './kernel/error-text.js';

// TR12: each yoke process (the server, the database door) holds a lease in
// the store and renews it. What a process holds (dispatch reservations,
// close-out claims) belongs to it while the lease lives, and is freed when
// the lease lapses, never by another process's start. A process that can see
// another's pid (TR31: the same kernel boot and the same pid namespace, not
// merely the same hostname) knows it dead at once when that pid no longer runs,
// or runs a process started at another time, so a restart takes over what it held.

export interface ProcessLeasePolicy {
  /** How long a lease lasts without renewal. */
  leaseMs: number;
  /** How often it is renewed (well inside the lease). */
  renewMs: number;
}

export const DEFAULT_PROCESS_LEASE: ProcessLeasePolicy = { leaseMs: 30_000, renewMs: 10_000 };

export const newProcessId = (): string => `p-${randomBytes(6).toString('hex')}`;

/** Who a process is, as far as another process may judge it by its pid. */
export interface ProcessIdentity {
  /** For people reading the table; never used to judge. */
  host: string;
  pid: number;
  /** This kernel boot and pid namespace; '' where they cannot be read (then the lease alone judges). */
  machine: string;
  /** The pid's start time, in clock ticks since boot; '' where unknown. */
  pidStart: string;
}

const readOr = (read: () => string): string => {
  try {
    return read().trim();
  } catch {
    return '';
  }
};

/** The kernel boot and pid namespace this process sees pids in. */
export function localMachine(): string {
  const boot = readOr(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8'));
  const pidNs = readOr(() => readlinkSync('/proc/self/ns/pid'));
  return boot && pidNs ? `${boot}/${pidNs}` : '';
}

/** When a pid here started (field 22 of /proc/<pid>/stat), or null when no such process runs. */
export function pidStartOf(pid: number): string | null {
  const stat = readOr(() => readFileSync(`/proc/${pid}/stat`, 'utf8'));
  if (!stat) return null;
  // The command name, in parentheses, may hold spaces: the fields after it are counted from its close.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
}

export function localIdentity(pid: number = process.pid): ProcessIdentity {
  return { host: hostname(), pid, machine: localMachine(), pidStart: pidStartOf(pid) ?? '' };
}

export interface ProcessLeaseDeps {
  store: Store;
  clock: Clock;
  timers: Timers;
  log: Log;
  /** This process's identity, and how to read a pid's start here (injected in tests). */
  identity?: ProcessIdentity;
  pidStart?: (pid: number) => string | null;
  /**
   * What this process does once it finds its lease lapsed, called once: the server stops (serveYoke), so that its
   * supervisor starts it afresh under a new lease. Without it the process says so on every renewal and serves on.
   */
  onLapsed?: () => void;
}

/** Whether a recorded process is known dead from here: the same boot and pid namespace, and its pid gone or reused. */
function knownDead(
  p: { machine: string; pid: number; pidStart: string },
  self: ProcessIdentity,
  pidStart: (pid: number) => string | null,
): boolean {
  if (!self.machine || p.machine !== self.machine || p.pid === self.pid) return false;
  const now = pidStart(p.pid);
  return now === null || (p.pidStart !== '' && now !== p.pidStart);
}

/** Ends the leases of the processes known dead from here, and fails what they left in flight. */
export async function reapDeadProcesses(deps: ProcessLeaseDeps, selfId: string): Promise<string[]> {
  const self = deps.identity ?? localIdentity();
  const dead = (await deps.store.processes.living()).filter(
    (p) => p.id !== selfId && knownDead(p, self, deps.pidStart ?? pidStartOf),
  );
  for (const p of dead) await deps.store.processes.end(p.id);
  const failed = await deps.store.dispatchRequests.failLapsed(deps.clock.now());
  if (dead.length || failed)
    deps.log.info(
      { dead: dead.map((p) => `${p.id} (pid ${p.pid})`), failed },
      'freed what stopped yoke processes held',
    );
  return dead.map((p) => p.id);
}

/** What a process says when it finds its lease lapsed: what others do about it, and what it does itself. */
export function leaseLapsedMessage(stops: boolean): string {
  return `this process's lease lapsed or was ended (it stalled past its lease, or another found it gone): what it held is being taken over, and what it still holds can be taken at once; ${stops ? 'yoke stops, for its service manager to start it again' : 'restart this yoke'}`;
}

export interface ProcessLease {
  id: string;
  stop(): Promise<void>;
}

/** Registers this process, frees what dead ones held, and renews the lease until stopped. */
export async function startProcessLease(
  deps: ProcessLeaseDeps,
  policy: ProcessLeasePolicy,
  id: string = newProcessId(),
): Promise<ProcessLease> {
  await deps.store.processes.register({ id, ...(deps.identity ?? localIdentity()), leaseMs: policy.leaseMs });
  await reapDeadProcesses(deps, id);
  let lapsed = false;
  const renew = async () => {
    try {
      if (!(await deps.store.processes.renew(id, policy.leaseMs))) {
        deps.log.error({ process: id }, leaseLapsedMessage(deps.onLapsed !== undefined));
        if (!lapsed) deps.onLapsed?.();
        lapsed = true;
      }
      await reapDeadProcesses(deps, id);
    } catch (err) {
      deps.log.warn({ err: errorStack(err) }, "could not renew this process's lease");
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
