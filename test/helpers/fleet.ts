import { expect } from 'vitest';
import {
  DEFAULT_VISIBILITY_POLICY,
  DEFAULT_CLOSEOUT_POLICY,
  DEFAULT_LABEL_POLICY,
  DEFAULT_COMMAND_POLICY,
  type FleetContext,
  type FleetPolicy,
} from '../../src/fleet/context.js';
import { Engine } from '../../src/fleet/engine/engine.js';
import type { RepoRef } from '../../src/forge/types.js';
import type { Launcher, LaunchSpec, Liveness } from '../../src/launcher/launcher.js';
import type { Timers } from '../../src/kernel/clock.js';
import { silentLog, type Log } from '../../src/kernel/log.js';
import type { NewRun, Run } from '../../src/store/fleet/runs.js';
import type { Store } from '../../src/store/store.js';
import { testStore } from './test-store.js';
import { recordOwedOnMerge } from '../../src/delivery/runs/owed.js';
import { OPEN_FENCE, type Fence } from '../../src/kernel/fence.js';
import { FakeForge, type FakePull } from './fake-forge.js';

/** A gate a test opens by hand: whatever awaits `opened` waits for it, with no sleep. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}

/** Waits (in real time, a few ms at a time, for at most `ms`) until cond holds. */
export async function until(cond: () => boolean | Promise<boolean>, what = 'the condition', ms = 5000): Promise<void> {
  for (const stop = Date.now() + ms; !(await cond());) {
    if (Date.now() > stop) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export class ManualClock {
  constructor(public t = Date.UTC(2026, 10, 29, 12, 0, 0)) {}
  now = (): number => this.t;
  advance(ms: number): void {
    this.t += ms;
  }
}

/** Processes "out there": they survive a yoke restart, like Actions runs do. */
export class ProcessTable {
  running = new Map<string, LaunchSpec>();
  ended = new Set<string>();
  log: { event: 'start' | 'end'; runId: string; repo: string; concurrent: number }[] = [];
}

export class FakeLauncher implements Launcher {
  readonly name = 'command' as const;
  usesSecret(): boolean {
    return true;
  }
  failNext = 0;
  starts: LaunchSpec[] = [];
  /** Resolves each start only when released, to hold launches open across interleavings. */
  gate: Promise<void> | null = null;
  /** Starts held at the gate now. */
  waiting = 0;

  constructor(readonly table = new ProcessTable()) {}

  pendingRef(): null {
    return null;
  }

  async start(spec: LaunchSpec): Promise<{ ref: string | null }> {
    if (this.gate) {
      this.waiting++;
      await this.gate;
      this.waiting--;
    }
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('the launcher refused the start');
    }
    this.starts.push(spec);
    this.table.running.set(spec.runId, spec);
    this.table.log.push({
      event: 'start',
      runId: spec.runId,
      repo: spec.repo.fullName,
      concurrent: this.table.running.size,
    });
    return { ref: `fake:${spec.runId}` };
  }

  /** The run's process exits. */
  finish(runId: string): void {
    if (!this.table.running.delete(runId)) return;
    this.table.ended.add(runId);
    this.table.log.push({ event: 'end', runId, repo: '', concurrent: this.table.running.size });
  }

  async liveness(run: Run): Promise<Liveness> {
    if (this.table.running.has(run.id)) return { state: 'running' };
    if (this.table.ended.has(run.id)) return { state: 'ended', detail: 'exit code 0' };
    return { state: 'never_started', detail: 'the process was never started' };
  }

  async cancel(run: Run, _repo: RepoRef): Promise<void> {
    this.finish(run.id);
  }
}

export const noTimers: Timers = { setInterval: () => 0, clearInterval: () => {} };

export const defaultPolicy = (over: Partial<FleetPolicy> = {}): FleetPolicy => ({
  globalCap: 2,
  repoCaps: {},
  pauseThreshold: 3,
  configRefreshMs: 600_000,
  landerAttemptsPerHead: 2,
  readConcurrency: 4,
  idleProbeMs: 300_000,
  activeWindowMs: 600_000,
  tickMs: 60_000,
  reaperMs: 30_000,
  ...DEFAULT_COMMAND_POLICY,
  ...DEFAULT_CLOSEOUT_POLICY,
  ...DEFAULT_LABEL_POLICY,
  ...DEFAULT_VISIBILITY_POLICY,
  dailyUsd: null,
  monthlyUsd: null,
  newWorkShare: 1,
  ...over,
});

export interface Harness {
  engine: Engine;
  /** What commands and the API get: the fleet context. */
  fleet: FleetContext;
  store: Store;
  forge: FakeForge;
  launcher: FakeLauncher;
  clock: ManualClock;
  /** The harness's process lease, once written (a test that counts the store's writes waits for it). */
  registered: Promise<void>;
}

let seq = 0;

export function makeHarness(
  opts: {
    policy?: Partial<FleetPolicy>;
    store?: Store;
    forge?: FakeForge;
    launcher?: FakeLauncher;
    clock?: ManualClock;
    timers?: Timers;
    leads?: () => Promise<boolean>;
    lead?: () => Promise<Fence | null>;
    newRunId?: () => string;
    log?: Log;
  } = {},
): Harness {
  const clock = opts.clock ?? new ManualClock();
  // Leases read the test's clock as the database's (TR31).
  const store = opts.store ?? testStore(clock);
  const forge = opts.forge ?? new FakeForge();
  const launcher = opts.launcher ?? new FakeLauncher();
  const engine = new Engine({
    store,
    forge,
    launcher,
    clock,
    timers: opts.timers ?? noTimers,
    log: opts.log ?? silentLog,
    policy: defaultPolicy(opts.policy),
    apiUrl: 'http://yoke.test',
    webUrl: 'https://github.test',
    trustedMarkerLogins: [],
    newRunId: opts.newRunId ?? (() => `run${String(++seq).padStart(4, '0')}`),
    // As the composition root does: delivery listens to the fleet's merges.
    onMerged: recordOwedOnMerge,
    ...(opts.lead
      ? { lead: opts.lead }
      : opts.leads
        ? { lead: async () => ((await opts.leads!()) ? OPEN_FENCE : null) }
        : {}),
  });
  // TR12: the test's yoke process holds a lease that outlives any test clock.
  // Not awaited (the harness is built synchronously): the lease reads its clock first, then is written, before a pass
  // or a claim can ask for it. A failure fails the test run loudly.
  const registered = store.processes.register({
    id: engine.processId,
    host: 'test-host',
    pid: 1,
    leaseMs: 100 * 365 * 86_400_000,
  });
  registered.catch((err: unknown) => {
    throw err;
  });
  return { engine, fleet: engine.context(), store, forge, launcher, clock, registered };
}

export const AUTOLAND = { autoland: { enabled: true }, fix_forward: { enabled: true, max_attempts: 2 } };

/** Reports a run's result the way a run would, through the store. */
export async function report(
  h: Harness,
  runId: string,
  outcome: 'success' | 'failure',
  verdict?: 'accept' | 'reject',
): Promise<void> {
  await h.store.runs.recordReport(runId, { outcome, verdict: verdict ?? null, summary: 'test' }, 0);
  h.launcher.finish(runId);
}

/**
 * A claim PR as yoke's own AFK run would open it: from a branch of the repo,
 * closing its issue, naming the run (which this records as ended).
 */
export async function addClaimPull(
  h: Harness,
  repo: string,
  pull: { number: number; issue: number; headSha: string; draft?: boolean; headRepo?: string; labels?: string[] },
): Promise<{ runId: string; pull: FakePull }> {
  const runId = `afk-${repo.replace('/', '-')}-${pull.issue}-${++seq}`;
  await h.store.repos.ensure(repo, h.forge.repo(repo).ref.installationId, h.clock.now());
  await endedRun(h, {
    id: runId,
    repo,
    kind: 'afk_auto',
    subject: `issue#${pull.issue}`,
    issueNumber: pull.issue,
    prNumber: null,
    headSha: null,
  });
  const fake = h.forge.addPull(repo, {
    number: pull.number,
    headSha: pull.headSha,
    draft: pull.draft,
    headRepo: pull.headRepo,
    labels: pull.labels ?? [],
    body: `Closes #${pull.issue}\n\nYoke-Run: ${runId}`,
  });
  return { runId, pull: fake };
}

/** BU03: a claim PR of `issue`, which the next pass validates with a lander that reserves nothing and rejects it. */
export async function rejectedClaim(h: Harness, repo: string, pull: { number: number; issue: number }): Promise<void> {
  await addClaimPull(h, repo, { ...pull, headSha: 'a'.repeat(40) });
  await h.engine.schedulerTick();
  const lander = h.launcher.starts.at(-1)!;
  expect([lander.kind, (await h.store.runs.get(lander.runId))!.reservedUsd]).toEqual(['lander', 0]);
  await report(h, lander.runId, 'success', 'reject');
  await h.engine.reaperTick();
}

/** A lander run of yoke's that reported this verdict for the PR at this head, and ended. */
export async function recordVerdict(
  h: Harness,
  repo: string,
  pr: number,
  headSha: string,
  verdict: 'accept' | 'reject',
  /** LD01: the base it judged the head on; by default, where the default branch is now. */
  baseSha?: string | null,
): Promise<string> {
  const base = baseSha === undefined ? await h.forge.readBranchTip(h.forge.repo(repo).ref, 'main') : baseSha;
  const runId = `lander-${pr}-${headSha.slice(0, 7)}-${++seq}`;
  await endedRun(
    h,
    { id: runId, repo, kind: 'lander', subject: `pr#${pr}`, issueNumber: null, prNumber: pr, headSha },
    verdict,
  );
  if (base) await h.store.runs.setJudgedTree(runId, base, []);
  return runId;
}

/** A run that ran and ended successfully before the test's story starts (with its verdict, for a lander). */
async function endedRun(
  h: Harness,
  run: Pick<NewRun, 'id' | 'repo' | 'kind' | 'subject' | 'issueNumber' | 'prNumber' | 'headSha'>,
  verdict?: 'accept' | 'reject',
): Promise<void> {
  const at = h.clock.now();
  await h.store.runs.insert({
    ...run,
    launchedAt: at,
    budgetDeadline: at + 60_000,
    launcher: 'command',
    launcherRef: null,
    secretHash: null,
    capAtLaunch: 1,
    liveAtLaunch: 1,
  });
  if (verdict)
    await h.store.runs.recordReport(run.id, { outcome: 'success', verdict, summary: 'recorded by the test' }, 0);
  await h.store.runs.end(run.id, 'success', null, at);
}

/** A log that keeps each line as `level: message`, for a test to compare. */
export function recordingLog(lines: string[]): Log {
  return {
    info: (_o, m) => lines.push(`info: ${m}`),
    warn: (_o, m) => lines.push(`warn: ${m}`),
    error: (_o, m) => lines.push(`error: ${m}`),
  };
}
