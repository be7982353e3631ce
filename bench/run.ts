import { parseRepoConfig } from '../src/config/repo-config.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { containAgent, containmentProblem } from '../src/agent/contain/contain.js';
import { scanDiff } from '../src/agent/secret-scan.js';
import { generateKeyPairSync } from 'node:crypto';
import { Probot } from 'probot';
import { createYokeApp } from '../src/app.js';
import { clientPolicy, yokeOctokit } from '../src/forge/github/octokit.js';
import { settingsWith } from '../src/config/env.js';
import type { CacheStats } from '../src/forge/github/conditional-cache.js';
import type { Candidate, SpawnStage } from '../src/fleet/candidate.js';
import { moneyFor, recordLaunch } from '../src/fleet/runs/launch.js';
import { openingLedger } from '../src/fleet/money/ledger.js';
import { spawnPass } from '../src/fleet/spawn/spawn-pass.js';
import type { Launcher } from '../src/launcher/launcher.js';
import { systemClock } from '../src/kernel/clock.js';
import { openStore } from '../src/store/store.js';
import { EmbeddedForge } from '../sandbox/forge-server.js';
import { benchDelivery } from './delivery.js';
import { benchRunsReach } from './runs-reach.js';
import { benchLanding } from './landing.js';
import { benchScale } from './scale.js';
import { benchReaders } from './readers.js';
import { benchObservedPass } from './observed.js';
import { benchEngines, concurrentLaunches, type BenchEngine } from './engines.js';
import { SMOKE, sized } from './size.js';

// `npm run bench`: each figure on its own line as `name: value unit`.

const print = (name: string, value: number, unit: string) =>
  console.log(`${name}: ${Number.isInteger(value) ? value : value.toFixed(3)} ${unit}${SMOKE ? ' [smoke]' : ''}`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const noopLauncher: Launcher = {
  name: 'command',
  usesSecret: () => true,
  pendingRef: () => null,
  start: async () => ({ ref: 'bench' }),
  liveness: async () => ({ state: 'running' }),
  cancel: async () => {},
};

async function benchSpawnPass(engine: BenchEngine): Promise<void> {
  const stages: SpawnStage[] = ['new_work', 'fix', 'lander'];
  const candidates: Candidate[] = [];
  for (let r = 0; r < sized(1000, 10); r++) {
    for (let i = 0; i < 10; i++) {
      const stage = stages[(r + i) % 3]!;
      candidates.push({
        stage,
        repo: `bench/repo-${r}`,
        installationId: 1,
        kind: stage === 'lander' ? 'lander' : stage === 'fix' ? 'fix' : 'afk_auto',
        subject: `${stage === 'new_work' ? 'issue' : 'pr'}#${i}`,
        issueNumber: i,
        prNumber: stage === 'new_work' ? null : i,
        headSha: stage === 'new_work' ? null : 'abcdef1',
        budgetMinutes: 30,
        requestId: null,
        why: 'bench',
      });
    }
  }
  const repoCaps: Record<string, number> = {};
  for (let r = 0; r < 1000; r += 10) repoCaps[`bench/repo-${r}`] = 8;
  const policy = { globalCap: 4, repoCaps, pauseThreshold: 3 };
  const times: number[] = [];
  for (let round = 0; round < sized(engine.name === 'sqlite' ? 41 : 11, 2); round++) {
    const store = await engine.open();
    let n = 0;
    const deps = { store, launcher: noopLauncher, clock: { now: () => Date.now() }, newRunId: () => `b${++n}` };
    const t0 = performance.now();
    await spawnPass(candidates, { liveCount: 0, liveSubjects: new Set() }, policy, async (c, cap) => {
      const rec = await recordLaunch(deps, c, cap);
      return rec.kind === 'recorded' ? { kind: 'launched', runId: rec.runId } : rec;
    });
    times.push(performance.now() - t0);
    await store.close();
  }
  print(`spawn_pass_10k_candidates_ms${engine.suffix}`, median(times.slice(1)), 'ms');
  // BU01: the same pass with budgets on: every repository's $5 a day and $2 a run, the fleet's $50, each
  // launch shed by the pass's ledger or reserved by the locked launch.
  const parsed = parseRepoConfig({ budget: { daily_usd: 5 }, agent: { max_usd: 2 } });
  if (parsed.state !== 'valid') throw new Error('the bench config does not parse');
  const facts = { config: parsed.config };
  const budgeted: number[] = [];
  for (let round = 0; round < sized(engine.name === 'sqlite' ? 41 : 11, 2); round++) {
    const store = await engine.open();
    let n = 0;
    const deps = {
      store,
      launcher: noopLauncher,
      clock: { now: () => Date.now() },
      newRunId: () => `b${++n}`,
      budgets: { dailyUsd: 50, monthlyUsd: null, newWorkShare: 1 },
      ledger: await openingLedger(store, Date.now()),
    };
    const t0 = performance.now();
    await spawnPass(candidates, { liveCount: 0, liveSubjects: new Set() }, policy, async (c, cap) => {
      const { reserve, budgets, shed } = moneyFor(c, facts, deps);
      if (shed) return { kind: 'over_budget', why: shed };
      const rec = await recordLaunch(deps, c, cap, { money: { reserve, budgets } });
      if (rec.kind !== 'recorded') return rec;
      if (reserve) deps.ledger.add(c.repo, c.kind, reserve);
      return { kind: 'launched', runId: rec.runId };
    });
    budgeted.push(performance.now() - t0);
    await store.close();
  }
  print(`spawn_pass_10k_candidates_budgets_ms${engine.suffix}`, median(budgeted.slice(1)), 'ms');
  await benchObservedPass(engine, candidates, policy, noopLauncher, print);
}

interface FleetFigures {
  coldMs: number;
  idleMs: number;
  coldRepoRequests: number;
  idleLog: { path: string; status: number }[];
  maxInFlight: number;
}

/** yoke against the embedded forge (the one fake GitHub), answering after `latencyMs`: one cold pass, then one idle pass. */
async function pollFleet(opts: { repos: number; latencyMs: number; maxInFlight: number }): Promise<FleetFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'yoke-bench-'));
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const forge = new EmbeddedForge({
    dataDir: dir,
    appId: 1,
    appSlug: 'yoke-bench',
    appPublicKey: keys.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    latencyMs: opts.latencyMs,
  });
  try {
    await forge.start();
    for (let i = 0; i < opts.repos; i++) {
      // The figures are the cost of reading a fleet. A new installation's dashboard issues are opened a few a
      // pass (DEFAULT_VISIBILITY_POLICY), a one-time write spread over many passes, so they are left out here;
      // once open, an unchanged dashboard costs no request (test/app.test.ts).
      const repo = forge.createRepo(`bench/repo-${String(i).padStart(4, '0')}`, {
        files: { '.github/yoke.yml': 'auto: true\nautoland:\n  enabled: true\ndashboard_issue: false\n' },
        installationId: 1,
      });
      forge.createIssue(repo, forge.user('bench'), 'An issue nobody labelled', 'Nothing to do here.');
    }
    const store = openStore(join(dir, 'idle.db'));
    const stats: CacheStats = { requests: 0, notModified: 0 };
    const privateKey = keys.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const Octokit = yokeOctokit(store, systemClock, stats, clientPolicy(false, opts.maxInFlight));
    const probot = new Probot({ appId: 1, privateKey, Octokit, baseUrl: `${forge.url}/api/v3`, logLevel: 'fatal' });
    const { appFn, runtime } = createYokeApp({
      store,
      cacheStats: stats,
      startTicks: false,
      settings: settingsWith({
        dbPath: join(dir, 'idle.db'),
        publicUrl: 'http://127.0.0.1:1',
        botLogin: 'yoke-bench[bot]',
        maxRequestsInFlight: opts.maxInFlight,
      }),
    });
    await probot.load(appFn, { cwd: process.cwd(), addHandler: () => {} });
    const rt = await runtime;
    let t0 = performance.now();
    const cold = await rt.engine.schedulerTick(); // cold: reads everything once
    const coldMs = performance.now() - t0;
    if (cold.repos !== opts.repos || cold.authFailures.length)
      throw new Error(`cold pass saw ${cold.repos} repos: ${JSON.stringify(cold.authFailures)}`);
    const coldRepoRequests = forge.http.stats.log.filter((l) => l.path.includes('/repos/')).length;
    const coldMaxInFlight = forge.http.stats.maxInFlight;
    forge.http.resetStats();
    t0 = performance.now();
    await rt.engine.schedulerTick(); // idle: nothing changed
    const idleMs = performance.now() - t0;
    const figures = {
      coldMs,
      idleMs,
      coldRepoRequests,
      idleLog: [...forge.http.stats.log],
      maxInFlight: Math.max(coldMaxInFlight, forge.http.stats.maxInFlight),
    };
    await rt.stop();
    await store.close();
    return figures;
  } finally {
    await forge.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function benchIdlePoll(): Promise<void> {
  const repos = sized(200, 5);
  const f = await pollFleet({ repos, latencyMs: 0, maxInFlight: 10 });
  const repoScoped = f.idleLog.filter((l) => l.path.includes('/repos/'));
  const listing = f.idleLog.filter((l) => !l.path.includes('/repos/'));
  print('idle_poll_requests_per_repo', repoScoped.length / repos, 'requests');
  print(
    'idle_poll_rate_limited_requests_per_repo',
    repoScoped.filter((l) => l.status !== 304).length / repos,
    'requests',
  );
  print('idle_poll_fleet_listing_requests', listing.length, 'requests');
  print('idle_poll_fleet_listing_rate_limited_requests', listing.filter((l) => l.status !== 304).length, 'requests');
  print('cold_poll_requests_per_repo', f.coldRepoRequests / repos, 'requests');
}

/** A thousand repositories behind a GitHub that answers after 50 ms, as a distant github.com would. */
async function benchFleet(): Promise<void> {
  const maxInFlight = Number(process.env.BENCH_IN_FLIGHT ?? settingsWith({}).maxRequestsInFlight);
  const f = await pollFleet({ repos: sized(1000, 10), latencyMs: sized(50, 5), maxInFlight });
  print('cold_read_1000_repos_ms', Math.round(f.coldMs), 'ms');
  print('idle_pass_1000_repos_ms', Math.round(f.idleMs), 'ms');
  // Default settings: a scheduler pass every 60 s and a reaper pass every 30 s, each lists the fleet;
  // each idle repository is probed (one request, answered 304) every YOKE_IDLE_PROBE_SECONDS.
  const defaults = settingsWith({});
  const passesPerMin = 60_000 / defaults.tickMs + 60_000 / defaults.reaperMs;
  const probesPerMin = (1000 * 60_000) / defaults.idleProbeMs;
  print('idle_points_per_min_1000_repos', Math.round(f.idleLog.length * passesPerMin + probesPerMin), 'points');
  print('max_requests_in_flight', f.maxInFlight, `requests (setting ${maxInFlight})`);
}

/** SC04: 20 repositories with equal backlogs share a cap of 4 over 100 passes. */
async function benchFairShare(): Promise<void> {
  const launches = new Map<string, number>();
  for (let pass = 0; pass < sized(100, 5); pass++) {
    const candidates: Candidate[] = [];
    for (let r = 0; r < 20; r++) {
      for (let i = 0; i < 5; i++) {
        candidates.push({
          stage: 'new_work',
          repo: `fair/r${r}`,
          installationId: 1,
          kind: 'afk_auto',
          subject: `issue#${i}`,
          issueNumber: i,
          prNumber: null,
          headSha: null,
          budgetMinutes: 30,
          requestId: null,
          why: 'bench',
        });
      }
    }
    await spawnPass(
      candidates,
      { liveCount: 0, liveSubjects: new Set() },
      { globalCap: 4, repoCaps: {}, pauseThreshold: 3 },
      async (c) => {
        launches.set(c.repo, (launches.get(c.repo) ?? 0) + 1);
        return { kind: 'launched', runId: 'x' };
      },
      pass,
    );
  }
  const counts = [...launches.values()];
  print('fair_share_spread', Math.max(...counts) - Math.min(...counts), 'launches');
}

async function benchLockedLaunches(engine: BenchEngine): Promise<void> {
  {
    const store = await engine.open({ file: true });
    let n = 0;
    const deps = { store, launcher: noopLauncher, clock: { now: () => Date.now() }, newRunId: () => `l${++n}` };
    const count = sized(5000, 300);
    // A fleet at its cap: 200 runs live throughout (each launch re-counts them); ending the oldest is not timed.
    const live: string[] = [];
    let timed = 0;
    for (let i = 0; i < count; i++) {
      const c: Candidate = {
        stage: 'new_work',
        repo: `bench/repo-${i % 50}`,
        installationId: 1,
        kind: 'afk_auto',
        subject: `issue#${i}`,
        issueNumber: i,
        prNumber: null,
        headSha: null,
        budgetMinutes: 30,
        requestId: null,
        why: 'bench',
      };
      const t0 = performance.now();
      const rec = await recordLaunch(deps, c, 1_000_000);
      timed += performance.now() - t0;
      if (rec.kind !== 'recorded') throw new Error(`unexpected ${rec.kind}`);
      live.push(rec.runId);
      if (live.length > 200) await store.runs.end(live.shift()!, 'success', null, Date.now());
    }
    print(`locked_launches_per_s${engine.suffix}`, Math.round(count / (timed / 1000)), 'launches/s (200 live)');
    await store.close();
  }
}

/** Two yoke processes launching at once on one store: what they record together, per second. */
async function benchTwoProcessLaunches(engine: BenchEngine): Promise<void> {
  print(
    `two_process_launches_per_s${engine.suffix}`,
    await concurrentLaunches(await engine.target(), 2, sized(3000, 100)),
    'launches/s (both together)',
  );
}

/** TR20: what containment adds to an agent's start (bubblewrap, the forwarder inside, the proxy outside), and what a secret scan of a change costs. */
async function benchContainment(): Promise<void> {
  if (containmentProblem() !== null) {
    console.log(`contain: skipped (${containmentProblem()})`);
    return;
  }
  const ws = mkdtempSync(join(tmpdir(), 'yoke-bench-ws-'));
  const starts: number[] = [];
  for (let i = 0; i < sized(15, 2); i++) {
    const home = mkdtempSync(join(tmpdir(), 'yoke-bench-home-'));
    const t0 = performance.now();
    const c = await containAgent(
      {
        workspace: ws,
        home,
        env: process.env,
        model: { upstream: 'https://api.anthropic.com', api: 'anthropic', auth: null },
        allow: [],
      },
      'true',
      [],
    );
    await new Promise<void>((r) =>
      spawn(c.command, c.args, { env: { ...process.env, ...c.env } }).on('exit', () => r()),
    );
    starts.push(performance.now() - t0);
    await c.close();
    rmSync(home, { recursive: true, force: true });
  }
  print(
    'contained_start_ms',
    median(starts),
    'ms (median of 15: bubblewrap, forwarder, proxy and model gateway, a command that exits at once)',
  );
  const files = sized(200, 5);
  const diff = Array.from({ length: files }, (_, f) =>
    [
      `+++ b/src/f${f}.js`,
      '@@ -0,0 +1,50 @@',
      ...Array.from({ length: 50 }, (_, l) => `+export const v${l} = 'value ${f}-${l}';`),
    ].join('\n'),
  ).join('\n');
  const t0 = performance.now();
  scanDiff(diff, ['a-job-secret-value-0123456789', 'another-secret-0123456789abcdef']);
  print(
    'secret_scan_lines_per_s',
    Math.round((files * 50) / ((performance.now() - t0) / 1000)),
    'added lines/s (two job values, six shapes)',
  );
  rmSync(ws, { recursive: true, force: true });
}

// BENCH_ONLY=fleet (a comma-separated list) runs some of them.
const only = process.env.BENCH_ONLY?.split(',');
const { engines, stop } = await benchEngines();
try {
  const benches: [string, () => unknown][] = [
    ['spawn', () => each(benchSpawnPass)],
    ['idle', benchIdlePoll],
    ['launches', () => each(benchLockedLaunches)],
    ['two', () => each(benchTwoProcessLaunches)],
    ['fair', benchFairShare],
    ['fleet', benchFleet],
    ['delivery', () => each((engine) => benchDelivery(print, median, engine))],
    ['contain', benchContainment],
    ['reach', () => benchRunsReach(print)],
    ['landing', () => benchLanding(print)],
    // BENCH_SCALE_REPOS=1000 (a comma-separated list) measures fewer sizes.
    [
      'scale',
      () =>
        each(async (engine) => {
          for (const n of (process.env.BENCH_SCALE_REPOS ?? (SMOKE ? '20' : '1000,10000')).split(','))
            await benchScale(print, engine, Number(n));
          // SC03 at one installation's size: every repository's listing is one endpoint, as GitHub counts it.
          if (engine === engines[0]) await benchScale(print, engine, SMOKE ? 20 : 2000, 1);
        }),
    ],
    // SC08/SC09: 1, 2 and 4 servers sharing the reading, on PostgreSQL (the smoke run: 2, the code every count runs).
    // BENCH_READERS=10000x10,40000x40 for the larger fleets.
    [
      'readers',
      async () => {
        const pg = engines.find((e) => e.name === 'postgres');
        if (!pg) return console.log('readers: needs PostgreSQL; not measured');
        const sizes = (process.env.BENCH_READERS ?? (SMOKE ? '20x4' : '1000x10')).split(',').map((s) => {
          const [repos, installations] = s.split('x').map(Number);
          return { repos: repos!, installations: installations! };
        });
        const counts = (process.env.BENCH_READERS_PROCESSES ?? (SMOKE ? '2' : '1,2,4')).split(',').map(Number);
        await benchReaders(print, pg, sizes, counts);
      },
    ],
  ];
  for (const [name, bench] of benches) if (!only || only.includes(name)) await bench();
} finally {
  await stop();
}

async function each(bench: (engine: BenchEngine) => Promise<void>): Promise<void> {
  for (const engine of engines) await bench(engine);
}
