import { openStoreAt } from '../src/store/store.js';
import { profiled } from './profile.js';
import { BenchClock, lockQuiet, startYoke, type Yoke } from './scale.js';

// One yoke server of the readers bench (bench/readers.ts), a process of its own so that its CPU is its own: it reads
// the fleet's GitHub at a URL and shares one PostgreSQL with the other servers. The bench drives it over IPC: its
// clock (the fleet's, moved on by hand), its ticks, and what it reports.

export type ServerAsk =
  | { op: 'fire'; at: number; offset: number }
  | { op: 'quiet' }
  | { op: 'report'; reset?: boolean }
  | { op: 'pass' }
  | { op: 'relist'; installationId: number }
  | { op: 'stop' };

export interface ServerReport {
  requests: number;
  /** This process's CPU since it started, in µs (user and system). */
  cpuUs: number;
  /** The last pass this server ran (a leader's), or null. */
  lastPass: { repos: number; deferred: number; unshared: number } | null;
}

export interface ServerStart {
  forgeUrl: string;
  privateKey: string;
  storeUrl: string;
  offset: number;
}

const send = (msg: unknown) =>
  new Promise<void>((resolve, reject) => process.send!(msg, (err: Error | null) => (err ? reject(err) : resolve())));

function report(yoke: Yoke): ServerReport {
  const cpu = process.cpuUsage();
  const last = yoke.rt.engine.lastPass;
  return {
    requests: yoke.stats.requests,
    cpuUs: cpu.user + cpu.system,
    lastPass: last && {
      repos: last.repos,
      deferred: last.deferred.length,
      unshared: last.deferred.filter((d) => d.reader !== undefined).length,
    },
  };
}

async function answer(yoke: Yoke, clock: BenchClock, ask: ServerAsk): Promise<unknown> {
  switch (ask.op) {
    case 'fire':
      clock.offset = ask.offset;
      yoke.timers.fireAt(ask.at);
      return null;
    case 'quiet':
      return lockQuiet(yoke);
    case 'report': {
      const r = report(yoke);
      if (ask.reset) yoke.stats.requests = 0;
      return r;
    }
    case 'pass':
      return profiled(process.env.BENCH_PROFILE_PASS, async () => {
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        await yoke.rt.engine.schedulerTick();
        const cpu = process.cpuUsage(cpu0);
        return { ms: performance.now() - t0, cpuUs: cpu.user + cpu.system };
      });
    case 'relist':
      await yoke.rt.fleet.relist(ask.installationId);
      return null;
    case 'stop':
      await yoke.rt.stop();
      return null;
  }
}

async function main(): Promise<void> {
  const start = JSON.parse(process.argv[2]!) as ServerStart;
  const clock = new BenchClock();
  clock.offset = start.offset;
  const store = await openStoreAt(start.storeUrl);
  const yoke = await startYoke(
    { forge: { url: start.forgeUrl }, clock, privateKey: start.privateKey },
    store,
    'unused',
  );
  process.on('message', (msg: { id: number; ask: ServerAsk }) => {
    void answer(yoke, clock, msg.ask)
      .then((value) => send({ id: msg.id, value }))
      .then(async () => {
        if (msg.ask.op !== 'stop') return;
        await store.close();
        process.disconnect();
      })
      .catch((err: unknown) => send({ id: msg.id, error: String(err instanceof Error ? err.stack : err) }));
  });
  await send({ id: 0, value: 'ready' });
}

await main();
