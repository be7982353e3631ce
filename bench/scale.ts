import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Probot } from 'probot';
import { createYokeApp, type YokeRuntime } from '../src/app.js';
import { settingsWith } from '../src/config/env.js';
import type { CacheStats } from '../src/forge/github/conditional-cache.js';
import { BudgetBook, GITHUB_SECONDARY_LIMITS } from '../src/forge/github/budget.js';
import { clientPolicy, yokeOctokit } from '../src/forge/github/octokit.js';
import type { Timers } from '../src/kernel/clock.js';
import type { Store } from '../src/store/store.js';
import { EmbeddedForge } from '../sandbox/forge-server.js';
import { DEFAULT_PROCESS_LEASE } from '../src/process-lease.js';
import type { BenchEngine } from './engines.js';
import { profiled } from './profile.js';
import { sized } from './size.js';

// SC01-SC06 at scale: a fleet of repositories in ten installations behind a GitHub that answers after 50 ms
// and enforces GitHub's rate limits (sandbox/forge/limits.ts), read by yoke as a server runs it: the request
// budget on, ticks on its timers. Figures: the cold read, an idle pass, each installation's idle points a
// minute over a whole refresh cycle (simulated on a shared clock), a stop in the middle of a pass, and on
// PostgreSQL, a second yoke taking the lead from the first. BENCH_VERBOSE=1 prints each cold pass and the
// idle cycle's requests by route.

export type Print = (name: string, value: number, unit: string) => void;

/** Real time, moved on by hand for the idle cycle: GitHub's clock and yoke's are this one. */
export class BenchClock {
  offset = 0;
  now = (): number => Date.now() + this.offset;
  advance(ms: number): void {
    this.offset += ms;
  }
}

/** How often a process renews its lease and its lead (DEFAULT_PROCESS_LEASE, DEFAULT_LEADERSHIP). */
const RENEW_MS = DEFAULT_PROCESS_LEASE.renewMs;

/** The ticks' timers, fired by the bench as the clock moves. */
export class BenchTimers implements Timers {
  private readonly intervals = new Map<number, { fn: () => void; ms: number; real?: NodeJS.Timeout }>();
  private next = 1;
  setInterval(fn: () => void, ms: number): unknown {
    const id = this.next++;
    // The stop's bound runs in real time, and so do the leases' renewals (every 10 s: a process whose lease lapsed
    // while the bench waited would be dead to the others); every tick is fired by the bench.
    const real = ms < RENEW_MS ? setTimeout(fn, ms) : ms === RENEW_MS ? setInterval(fn, ms) : undefined;
    this.intervals.set(id, { fn, ms, real });
    return id;
  }
  clearInterval(handle: unknown): void {
    const t = this.intervals.get(Number(handle));
    if (t?.real) clearTimeout(t.real);
    this.intervals.delete(Number(handle));
  }
  /** Fires every interval of the ticks whose period divides `at` (ms since the cycle began). */
  fireAt(at: number): void {
    for (const t of [...this.intervals.values()]) if (t.ms > RENEW_MS && at % t.ms === 0) t.fn();
  }
}

export interface Yoke {
  rt: YokeRuntime;
  timers: BenchTimers;
  stats: CacheStats;
  budget: BudgetBook;
}

export interface Fleet {
  forge: EmbeddedForge;
  clock: BenchClock;
  privateKey: string;
  dir: string;
  repos: number;
  installations: number;
}

export async function startFleet(repos: number, installations: number, latencyMs: number): Promise<Fleet> {
  const dir = mkdtempSync(join(tmpdir(), 'yoke-scale-'));
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const clock = new BenchClock();
  const forge = new EmbeddedForge({
    dataDir: dir,
    appId: 1,
    appSlug: 'yoke-bench',
    appPublicKey: keys.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    latencyMs,
    now: clock.now,
  });
  await forge.start();
  await addRepos(forge, 0, repos, installations);
  return {
    forge,
    clock,
    privateKey: keys.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
    dir,
    repos,
    installations,
  };
}

/** Repositories `from` to `to` (not included) of a fleet, spread over its installations, each opted in with one issue. */
export async function addRepos(forge: EmbeddedForge, from: number, to: number, installations: number): Promise<void> {
  for (let i = from; i < to; i++) {
    // Making a repository is synchronous work (its git folder): the servers sharing this Node process renew their
    // leases in real time between them, as separate processes would. (Made in one go, 5,000 repositories held the
    // event loop for 45 s: every server's lease lapsed, and the readers bench measured one server reading alone.)
    if ((i - from) % 50 === 0) await new Promise((r) => setImmediate(r));
    const installationId = 1 + (i % installations);
    const repo = forge.createRepo(`org-${installationId}/repo-${String(i).padStart(5, '0')}`, {
      files: { '.github/yoke.yml': 'auto: true\nautoland:\n  enabled: true\ndashboard_issue: false\n' },
      installationId,
    });
    forge.createIssue(repo, forge.user(`org-${installationId}`), 'An issue nobody labelled', 'Nothing to do here.');
  }
}

/** Where a yoke finds the fleet: its GitHub, the app's key and the clock they share (a Fleet, or a server process's view of one). */
export type FleetAddress = { forge: { url: string } } & Pick<Fleet, 'clock' | 'privateKey'>;

/** A yoke as `yoke serve` makes it: the request budget on, throttling on, its ticks on the bench's timers. */
export async function startYoke(fleet: FleetAddress, store: Store, dbPath: string): Promise<Yoke> {
  const settings = settingsWith({ dbPath, publicUrl: 'http://127.0.0.1:1', botLogin: 'yoke-bench[bot]' });
  const budget = new BudgetBook(GITHUB_SECONDARY_LIMITS, fleet.clock.now);
  const stats: CacheStats = { requests: 0, notModified: 0 };
  const Octokit = yokeOctokit(store, fleet.clock, stats, clientPolicy(true, settings.maxRequestsInFlight), { budget });
  const probot = new Probot({
    appId: 1,
    privateKey: fleet.privateKey,
    Octokit,
    baseUrl: `${fleet.forge.url}/api/v3`,
    logLevel: 'fatal',
  });
  const timers = new BenchTimers();
  const { appFn, runtime } = createYokeApp({ store, cacheStats: stats, clock: fleet.clock, timers, budget, settings });
  await probot.load(appFn, { cwd: process.cwd(), addHandler: () => {} });
  return { rt: await runtime, timers, stats, budget };
}

/** Whether a yoke's pass lock is free with nothing queued behind it, once the lock was taken and given back. */
export async function lockQuiet(yoke: Yoke): Promise<boolean> {
  await yoke.rt.engine.lock.run(async () => {});
  return yoke.rt.engine.lock.queued === 0;
}

/**
 * Until `quiet` (yoke's passes and sweeps) and GitHub have been quiet a while: nothing queued, nothing in flight.
 * Past `limitMs`, fails saying so, rather than holding the bench for ever.
 */
export async function settleUntil(fleet: Fleet, quiet: () => Promise<boolean>, limitMs = Infinity): Promise<void> {
  let times = 0;
  const since = performance.now();
  while (times < 5) {
    if (performance.now() - since > limitMs)
      throw new Error(
        `bench: yoke did not settle within ${limitMs / 1000} s (requests in flight at GitHub: ${fleet.forge.http.stats.inFlight})`,
      );
    const q = await quiet();
    await new Promise((r) => setTimeout(r, 20));
    times = q && fleet.forge.http.stats.inFlight === 0 ? times + 1 : 0;
  }
}

/** Until yoke's passes and sweeps have settled: nothing queued, nothing in flight at GitHub, for a while. */
const settled = (fleet: Fleet, yoke: Yoke): Promise<void> => settleUntil(fleet, () => lockQuiet(yoke));

/** The cold read: from the first pass until every repository has been read, the reaper's tick bringing deferred ones. */
async function coldRead(fleet: Fleet, yoke: Yoke): Promise<{ ms: number; passes: number }> {
  const t0 = performance.now();
  const progress = process.env.BENCH_VERBOSE
    ? setInterval(() => {
        const s = fleet.forge.http.stats;
        console.error(`cold: ${s.requests} requests, ${s.inFlight} in flight, last: ${JSON.stringify(s.log.at(-1))}`);
      }, 10_000)
    : undefined;
  const read = new Set<string>();
  let passes = 0;
  // The lead's first pass began when the ticks started; each later one is the reaper's, every 30 s.
  while (!yoke.rt.engine.lastPass) await new Promise((r) => setTimeout(r, 20));
  for (;;) {
    await settled(fleet, yoke);
    const last = yoke.rt.engine.lastPass;
    if (process.env.BENCH_VERBOSE && last)
      console.error(
        `cold pass: ${last.repos} listed, ${last.deferred.length} deferred, ${last.authFailures.length} installations failed, ${Math.round(performance.now() - t0)} ms`,
      );
    if (last) {
      passes++;
      const deferred = new Set(last.deferred.map((d) => d.repo));
      for (const r of (await yoke.rt.store.repos.list()).map((x) => x.fullName)) if (!deferred.has(r)) read.add(r);
    }
    if (read.size >= fleet.repos) break;
    await new Promise((r) => setTimeout(r, 30_000 - ((performance.now() - t0) % 30_000)));
    yoke.rt.engine.reaperTick().catch((err: unknown) => console.error(err));
  }
  clearInterval(progress);
  return { ms: performance.now() - t0, passes };
}

/** One refresh cycle of idle passes and sweeps on the shared clock: each installation's points a minute. */
async function idleCycle(fleet: Fleet, yoke: Yoke, cycleMs: number): Promise<number[]> {
  fleet.forge.http.resetStats();
  // The clock moves by the ticks and by the time the passes take: points a minute are per minute it moved.
  const from = fleet.clock.now();
  for (let at = 10_000; at <= cycleMs; at += 10_000) {
    fleet.clock.advance(10_000);
    yoke.timers.fireAt(at);
    await settled(fleet, yoke);
  }
  if (process.env.BENCH_VERBOSE) {
    const routes = new Map<string, number>();
    for (const l of fleet.forge.http.stats.log.filter((x) => x.installation === 1)) {
      const route = `${l.method} ${l.status} ${l.path.replace(/repo-\d+/, '{repo}')}`;
      routes.set(route, (routes.get(route) ?? 0) + 1);
    }
    console.error('idle cycle, installation 1:', [...routes].sort((a, b) => b[1] - a[1]).slice(0, 12));
  }
  const points = new Map<number, number>();
  for (const l of fleet.forge.http.stats.log)
    if (l.installation !== undefined)
      points.set(l.installation, (points.get(l.installation) ?? 0) + (l.method === 'GET' ? 1 : 5));
  const minutes = (fleet.clock.now() - from) / 60_000;
  return [...points.values()].map((p) => p / minutes);
}

/** A stop while a pass reads, with a reaper pass and a kick queued behind it. */
async function stopMidPass(fleet: Fleet, yoke: Yoke): Promise<number> {
  // Every repository is woken: the pass probes each (the busiest an idle pass gets).
  for (const r of await yoke.rt.store.repos.list()) yoke.rt.fleet.wake(r.fullName);
  yoke.rt.engine.schedulerTick().catch(() => {});
  for (let i = 0; i < 500 && fleet.forge.http.stats.inFlight === 0; i++) await new Promise((r) => setTimeout(r, 10));
  yoke.rt.engine.reaperTick().catch(() => {});
  const t0 = performance.now();
  await yoke.rt.stop();
  return performance.now() - t0;
}

export async function benchScale(print: Print, engine: BenchEngine, repos: number, installations = 10): Promise<void> {
  const tag = `${repos}_repos${installations === 10 ? '' : `_${installations}_installation${installations === 1 ? '' : 's'}`}${engine.suffix}`;
  const fleet = await startFleet(repos, installations, 50);
  const store = await engine.open({ file: true });
  try {
    const yoke = await startYoke(fleet, store, join(fleet.dir, 'yoke.db'));
    const cold = await coldRead(fleet, yoke);
    print(
      `scale_cold_read_${tag}_s`,
      cold.ms / 1000,
      `s (${installations} installation${installations === 1 ? '' : 's'}, 50 ms latency, ${cold.passes} passes)`,
    );
    // The pass after the cold read: the listings and probes whose slots came round while it read are made in it.
    const t0 = performance.now();
    await yoke.rt.engine.schedulerTick();
    print(`scale_idle_pass_${tag}_s`, (performance.now() - t0) / 1000, 's');
    // The smoke bench runs one minute of the cycle: enough to print the figure, in a few seconds rather than fourteen.
    const cycleMs = sized(yoke.rt.settings.configRefreshMs, 60_000);
    const perMinute = await idleCycle(fleet, yoke, cycleMs);
    print(
      `scale_idle_points_per_min_${tag}`,
      Math.max(...perMinute),
      `points (the busiest installation, over a ${cycleMs / 60_000}-minute refresh cycle of ticks and the passes' own time; quietest ${Math.round(Math.min(...perMinute))})`,
    );
    // SC10: a pass with nothing due and nothing changed (the clock where the cycle left it), as the readers bench's
    // idle pass is. BENCH_PROFILE_PASS with BENCH_ONLY=scale: its profile, a file per size and engine.
    const profile = process.env.BENCH_ONLY === 'scale' ? process.env.BENCH_PROFILE_PASS : undefined;
    const settled = await profiled(profile?.replace(/(\.cpuprofile)?$/, `-${tag}.cpuprofile`), async () => {
      const cpu0 = process.cpuUsage();
      const at = performance.now();
      await yoke.rt.engine.schedulerTick();
      const cpu = process.cpuUsage(cpu0);
      return { s: (performance.now() - at) / 1000, cpu: (cpu.user + cpu.system) / 1e6 };
    });
    print(
      `scale_settled_pass_${tag}_s`,
      settled.s,
      `s (nothing due, nothing changed; its CPU, GitHub's in it, ${settled.cpu.toFixed(2)} s)`,
    );
    print(`scale_stop_${tag}_s`, (await stopMidPass(fleet, yoke)) / 1000, 's (mid-pass, two passes queued)');
    const refused = fleet.forge.http.limits.refused;
    print(
      `scale_refused_${tag}`,
      refused.primary + refused.secondary + refused.concurrent,
      `requests refused by GitHub (${refused.secondary} by a secondary limit: 900 points a minute per endpoint template)`,
    );
  } finally {
    await store.close();
    await fleet.forge.stop();
    rmSync(fleet.dir, { recursive: true, force: true });
  }
  // On a fleet of its own, whose GitHub has not seen the cycle's clock move.
  if (engine.name === 'postgres') {
    const again = await startFleet(repos, 10, 50);
    try {
      await handover(print, again, engine, tag);
    } finally {
      await again.forge.stop();
      rmSync(again.dir, { recursive: true, force: true });
    }
  }
}

/** Two yokes on one PostgreSQL database: the leader reads cold and stops; the follower takes the lead at its next tick. */
async function handover(print: Print, fleet: Fleet, engine: BenchEngine, tag: string): Promise<void> {
  const url = await engine.target();
  const { openStoreAt } = await import('../src/store/store.js');
  const [storeA, storeB] = [await openStoreAt(url), await openStoreAt(url)];
  try {
    const a = await startYoke(fleet, storeA, 'unused');
    const b = await startYoke(fleet, storeB, 'unused');
    await coldRead(fleet, a);
    const t0 = performance.now();
    const stopMs = await stopMidPass(fleet, a);
    // The follower's next reaper tick: it takes the lead there (no lease to wait out) and reads the fleet.
    b.timers.fireAt(30_000);
    await settled(fleet, b);
    const took = performance.now() - t0;
    const led = (await storeB.leaders.current('ticks'))?.holder === b.rt.engine.processId;
    print(`scale_two_yokes_stop_${tag}_s`, stopMs / 1000, 's (the leader, mid-pass)');
    print(
      `scale_two_yokes_takeover_${tag}_s`,
      took / 1000,
      `s (from the leader's stop to the follower's first pass done; the follower ${led ? 'leads' : 'DOES NOT lead'}, ${b.rt.engine.lastPass?.repos ?? 0} repositories listed, ${b.rt.engine.lastPass?.deferred.length ?? 0} deferred)`,
    );
    await b.rt.stop();
  } finally {
    await storeA.close();
    await storeB.close();
  }
}
