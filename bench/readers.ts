import { rmSync } from 'node:fs';
import type { BenchEngine } from './engines.js';
import { ServerProcess } from './reader-servers.js';
import { errorText } from '../src/kernel/error-text.js';
import { addRepos, settleUntil, startFleet, type Fleet, type Print } from './scale.js';

// SC08/SC09 at scale: 1, 2 and 4 yoke servers on one PostgreSQL, each a process of its own with its own GitHub
// client and request budget, sharing the reading of one fleet behind a GitHub (this process) that answers after
// 50 ms and enforces GitHub's limits. Figures: the cold read (from the fleet's arrival, the servers running, until
// the leader's pass has every repository's facts), the requests and CPU of each server, how five idle minutes'
// reading splits between them, and the leader's idle pass.

/** How long a tick may take to settle before the bench gives up on it. */
const SETTLE_LIMIT_MS = 10 * 60_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const secs = (us: number, digits = 1) => (us / 1e6).toFixed(digits);

/** Every server's ticks at `at` (ms into the run), then until every server and GitHub have been quiet a while. */
async function tick(fleet: Fleet, servers: readonly ServerProcess[], at: number): Promise<void> {
  await Promise.all(servers.map((s) => s.fire(at, fleet.clock.offset)));
  // The reading runs beside the passes, on each server's own timer: wait until GitHub has been quiet a while.
  await sleep(50);
  const quiet = async () => (await Promise.all(servers.map((s) => s.quiet()))).every(Boolean);
  await settleUntil(fleet, quiet, SETTLE_LIMIT_MS).catch((err: unknown) => {
    throw new Error(`readers bench, the tick at ${at} ms: ${errorText(err)}`);
  });
}

const reports = (servers: readonly ServerProcess[], reset = false) => Promise.all(servers.map((s) => s.report(reset)));

async function readersRun(
  print: Print,
  engine: BenchEngine,
  size: { repos: number; installations: number },
  processes: number,
): Promise<void> {
  const { repos, installations } = size;
  const tag = `${repos}_repos_${installations}_installations_${processes}_process${processes === 1 ? '' : 'es'}${engine.suffix}`;
  // The servers start on a fleet of one repository per installation and share out the installations; then the fleet
  // arrives, and the cold read is timed from there.
  const fleet = await startFleet(installations, installations, 50);
  const url = await engine.target();
  const servers: ServerProcess[] = [];
  try {
    for (let i = 0; i < processes; i++) servers.push(await ServerProcess.start(fleet, url));
    // The first server leads: its passes decide, the others read their share.
    const leader = servers[0]!;
    while (!(await leader.report()).lastPass) await sleep(20);
    let at = 0;
    for (let i = 0; i < 2; i++) await tick(fleet, servers, (at += 60_000));
    await addRepos(fleet.forge, installations, repos, installations);
    // GitHub says so (installation_repositories), to whichever server it sends the webhook: the first, here (SC10).
    for (let id = 1; id <= installations; id++) await leader.relist(id);
    const start = await reports(servers);
    const forgeCpu0 = process.cpuUsage();
    const t0 = performance.now();
    let ticks = 0;
    for (;;) {
      await tick(fleet, servers, (at += 60_000));
      ticks++;
      const last = (await leader.report()).lastPass;
      if (process.env.BENCH_VERBOSE) console.error('readers: cold tick', ticks, last);
      if (last && last.repos >= repos && last.deferred === 0) break;
      // A budget-deferred read waits for the next minute's room (a tick every 30 s of real time); one its reader
      // has not shared yet, for the next tick only.
      if (last && last.deferred > last.unshared)
        await sleep(Math.min(30_000, Math.max(0, 30_000 - ((performance.now() - t0) % 30_000))));
    }
    const forgeCpu = process.cpuUsage(forgeCpu0);
    const cold = (await reports(servers)).map((r, i) => ({
      requests: r.requests - start[i]!.requests,
      cpuUs: r.cpuUs - start[i]!.cpuUs,
    }));
    print(
      `readers_cold_read_${tag}_s`,
      (performance.now() - t0) / 1000,
      `s (${ticks} tick${ticks === 1 ? '' : 's'} of every server; each server's CPU: ${cold.map((c) => `${secs(c.cpuUs)} s`).join(', ')}; GitHub's: ${secs(forgeCpu.user + forgeCpu.system)} s)`,
    );
    print(
      `readers_cold_requests_${tag}`,
      cold.reduce((s, c) => s + c.requests, 0),
      `requests to GitHub (each server: ${cold.map((c) => c.requests).join(', ')})`,
    );
    // Five idle minutes of every server's ticks (each repository's probe comes round once in them): who asked GitHub,
    // and what each server spent of a core.
    const idle0 = await reports(servers, true);
    for (let i = 0; i < 5; i++) {
      fleet.clock.advance(60_000);
      await tick(fleet, servers, (at += 60_000));
    }
    const idle = (await reports(servers)).map((r, i) => ({ requests: r.requests, cpuUs: r.cpuUs - idle0[i]!.cpuUs }));
    const total = idle.reduce((s, c) => s + c.requests, 0);
    print(
      `readers_idle_busiest_share_${tag}`,
      total ? Math.max(...idle.map((c) => c.requests)) / total : 0,
      `of five idle minutes' ${total} requests went to the busiest server (each: ${idle.map((c) => c.requests).join(', ')}; an even split is ${(1 / processes).toFixed(2)})`,
    );
    print(
      `readers_idle_cpu_per_minute_${tag}_s`,
      Math.max(...idle.map((c) => c.cpuUs)) / 5 / 1e6,
      `s of a core a minute, the busiest server's, over five idle minutes (each: ${idle.map((c) => `${secs(c.cpuUs / 5, 2)} s`).join(', ')})`,
    );
    const pass = await leader.pass();
    print(
      `readers_idle_pass_${tag}_s`,
      pass.ms / 1000,
      `s (the leader's pass, nothing changed; its CPU ${(pass.cpuUs / 1e6).toFixed(2)} s)`,
    );
  } finally {
    for (const s of servers) await s.stop();
    await fleet.forge.stop();
    rmSync(fleet.dir, { recursive: true, force: true });
  }
}

/** Each size (BENCH_READERS: `REPOSxINSTALLATIONS`, comma-separated) on 1, 2 and 4 servers. */
export async function benchReaders(
  print: Print,
  engine: BenchEngine,
  sizes: readonly { repos: number; installations: number }[],
  processes: readonly number[],
): Promise<void> {
  for (const size of sizes) for (const p of processes) await readersRun(print, engine, size, p);
}
