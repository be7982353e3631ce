import { rmSync } from 'node:fs';
import { openStoreAt, type Store } from '../src/store/store.js';
import type { BenchEngine } from './engines.js';
import { addRepos, settled, startFleet, startYoke, type Fleet, type Print, type Yoke } from './scale.js';

// SC08/SC09 at scale: 1, 2 and 4 yoke servers on one PostgreSQL, each with its own GitHub client and request budget,
// sharing the reading of one fleet behind a GitHub that answers after 50 ms and enforces GitHub's limits. Figures: the
// cold read (from the fleet's arrival, the servers running, until the leader's pass has every repository's facts), the requests each
// server sent, how one idle tick's reading splits between them, and the leader's idle pass. The servers share this
// one Node process, so their CPU is given together.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every server's ticks at `at` (ms into the run): the reading and the scheduler every minute, the reaper every 30 s. */
async function tick(fleet: Fleet, yokes: readonly Yoke[], at: number): Promise<void> {
  for (const y of yokes) y.timers.fireAt(at);
  // The reading runs beside the passes, on each server's own timer: wait until GitHub has been quiet a while.
  await sleep(50);
  for (const y of yokes) await settled(fleet, y);
}

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
  const stores: Store[] = [];
  const yokes: Yoke[] = [];
  try {
    for (let i = 0; i < processes; i++) {
      const store = await openStoreAt(url);
      stores.push(store);
      yokes.push(await startYoke(fleet, store, 'unused'));
    }
    // The first server leads: its passes decide, the others read their share.
    const leader = yokes[0]!;
    while (!leader.rt.engine.lastPass) await sleep(20);
    let at = 0;
    for (let i = 0; i < 2; i++) await tick(fleet, yokes, (at += 60_000));
    await addRepos(fleet.forge, installations, repos, installations);
    // GitHub says so (installation_repositories), to whichever server it sends the webhook: the first, here (SC10).
    for (let id = 1; id <= installations; id++) await leader.rt.fleet.relist(id);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const before = yokes.map((y) => y.stats.requests);
    let ticks = 0;
    for (;;) {
      await tick(fleet, yokes, (at += 60_000));
      ticks++;
      const last = leader.rt.engine.lastPass;
      if (last && last.repos >= repos && last.deferred.length === 0) break;
      // A budget-deferred read waits for the next minute's room (a tick every 30 s of real time); one its reader
      // has not shared yet, for the next tick only.
      if (last.deferred.some((d) => d.reader === undefined))
        await sleep(Math.min(30_000, Math.max(0, 30_000 - ((performance.now() - t0) % 30_000))));
    }
    const cpu = process.cpuUsage(cpu0);
    print(
      `readers_cold_read_${tag}_s`,
      (performance.now() - t0) / 1000,
      `s (${ticks} tick${ticks === 1 ? '' : 's'} of every server; CPU of all servers: ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s)`,
    );
    const cold = yokes.map((y, i) => y.stats.requests - before[i]!);
    print(
      `readers_cold_requests_${tag}`,
      cold.reduce((s, n) => s + n, 0),
      `requests to GitHub (each server: ${cold.join(', ')})`,
    );
    // Five idle minutes of every server's ticks (each repository's probe comes round once in them): who asked GitHub.
    for (const y of yokes) {
      y.stats.requests = 0;
      y.stats.byRoute?.clear();
    }
    for (let i = 0; i < 5; i++) {
      if (process.env.BENCH_VERBOSE)
        console.error(
          'readers:',
          (await leader.rt.store.processes.readers()).map((p) => p.id),
          'leases:',
          (await leader.rt.store.installationLeases.current()).map((l) => `${l.installationId}:${l.holder}`).join(' '),
          'requests:',
          yokes.map((y) => y.stats.requests),
        );
      fleet.clock.advance(60_000);
      at += 60_000;
      await tick(fleet, yokes, at);
    }
    const split = yokes.map((y) => y.stats.requests);
    if (process.env.BENCH_VERBOSE)
      for (const y of yokes)
        console.error(
          'idle routes:',
          [...(y.stats.byRoute ?? new Map<string, number>())].sort((a, b) => b[1] - a[1]).slice(0, 10),
        );
    const total = split.reduce((s, n) => s + n, 0);
    print(
      `readers_idle_busiest_share_${tag}`,
      total ? Math.max(...split) / total : 0,
      `of five idle minutes' ${total} requests went to the busiest server (each: ${split.join(', ')}; an even split is ${(1 / processes).toFixed(2)})`,
    );
    const cpuIdle = process.cpuUsage();
    const tIdle = performance.now();
    await leader.rt.engine.schedulerTick();
    const idleCpu = process.cpuUsage(cpuIdle);
    print(
      `readers_idle_pass_${tag}_s`,
      (performance.now() - tIdle) / 1000,
      `s (the leader's pass, nothing changed; its CPU ${((idleCpu.user + idleCpu.system) / 1e6).toFixed(2)} s)`,
    );
  } finally {
    for (const y of yokes) await y.rt.stop();
    for (const s of stores) await s.close();
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
