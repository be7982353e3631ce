import { LeadershipLost } from '../../src/kernel/fence.js';
import { Leadership } from '../../src/leadership.js';
import { silentLog } from '../../src/kernel/log.js';
import type { Liveness } from '../../src/launcher/launcher.js';
import type { Run } from '../../src/store/fleet/runs.js';
import { openStoreAt } from '../../src/store/store.js';
import { FakeLauncher, makeHarness } from '../helpers/fleet.js';
import { BUDGET } from './fleet-budget.js';
import { text } from '../../src/store/sql/columns.js';

// One of several yoke processes on one PostgreSQL (test/fleet/fleet.processes.test.ts).
// Each has its own engine, forge view (the same repositories and issues) and
// leadership; what is out there (which runs' processes are running) is one
// table in the same database, as Actions is one for every yoke. It acts at
// random: the scheduler and reaper ticks (on the leader only), kicks (any
// process: a webhook), and runs finishing out there.
//
// argv: url name seed iterations cap [--forever]. Prints one JSON line per pass start ("pass"), and a summary at the end.

const [url, name, seedArg, itersArg, capArg, forever] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string | undefined,
];
let seed = Number(seedArg);
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const cap = Number(capArg);
const store = await openStoreAt(url);
await store.sql.exec(
  'CREATE TABLE IF NOT EXISTS world_runs (run_id TEXT PRIMARY KEY, state TEXT NOT NULL, started_by TEXT NOT NULL)',
);

/** A launcher whose processes live in the shared world table: started here, finished by whichever process. */
class WorldLauncher extends FakeLauncher {
  override async start(spec: Parameters<FakeLauncher['start']>[0]): Promise<{ ref: string | null }> {
    console.log(JSON.stringify({ event: 'pass', worker: name }));
    await new Promise((r) => setTimeout(r, forever ? 40 : 1)); // a launch takes a while: passes overlap in time across processes
    await store.sql.run("INSERT INTO world_runs (run_id, state, started_by) VALUES (?, 'running', ?)", [
      spec.runId,
      name,
    ]);
    return { ref: `world:${spec.runId}` };
  }
  override async liveness(run: Run): Promise<Liveness> {
    const row = await store.sql.get({ state: text }, 'SELECT state FROM world_runs WHERE run_id = ?', [run.id]);
    if (!row) return { state: 'never_started', detail: 'the process was never started' };
    return row.state === 'running' ? { state: 'running' } : { state: 'ended', detail: 'exit code 0' };
  }
}

// BU01: with YOKE_TEST_BUDGET=1, each repository has a daily budget and the fleet one of its own.
const budgeted = process.env.YOKE_TEST_BUDGET === '1';
let runs = 0;
const h = makeHarness({
  store,
  launcher: new WorldLauncher(),
  policy: { globalCap: cap, repoCaps: {}, ...(budgeted ? { dailyUsd: BUDGET.fleet } : {}) },
  newRunId: () => `${name}-${++runs}`,
});
for (let r = 0; r < 4; r++) {
  h.forge.addRepo(
    `fleet/r${r}`,
    budgeted ? { auto: true, budget: { daily_usd: BUDGET.repo }, agent: { max_usd: BUDGET.run } } : { auto: true },
  );
  for (let i = 1; i <= 5; i++) h.forge.addIssue(`fleet/r${r}`, i);
}
const leadership = new Leadership({
  leaders: store.leaders,
  processId: name,
  log: silentLog,
  policy: { leaseMs: 1_000, renewMs: 300 },
});
let maxSeen = 0;
let passes = 0;
let fenced = 0;
const errors: string[] = [];
const see = async () => (maxSeen = Math.max(maxSeen, await store.runs.countLive()));

let stopping = false;
process.on('SIGTERM', () => (stopping = true));
for (let i = 0; forever ? !stopping : i < Number(itersArg); i++) {
  const roll = random();
  try {
    if (roll < 0.3) {
      const fence = await leadership.fence();
      if (fence) (await h.engine.schedulerTick(fence), passes++);
    } else if (roll < 0.5) {
      const fence = await leadership.fence();
      if (fence) (await h.engine.reaperTick(fence), passes++);
    } else if (roll < 0.75) {
      await h.engine.kick();
      passes++;
    } else {
      // A run out there finishes: it reports, and its process exits.
      const running = await store.sql.all(
        { run_id: text },
        "SELECT run_id FROM world_runs WHERE state = 'running' ORDER BY run_id",
      );
      const done = running[Math.floor(random() * running.length)];
      if (done) {
        // With budgets, it spends some of what it reserved, never more (the gateway stops it there).
        const reserved = budgeted ? ((await store.runs.get(done.run_id))?.reservedUsd ?? 0) : 0;
        const cost = budgeted
          ? { usd: Math.round(reserved * random() * 100) / 100, inputTokens: 1, outputTokens: 1 }
          : null;
        await store.runs.recordReport(
          done.run_id,
          { outcome: random() < 0.8 ? 'success' : 'failure', verdict: null, summary: null, cost },
          Date.now(),
        );
        await store.sql.run("UPDATE world_runs SET state = 'ended' WHERE run_id = ?", [done.run_id]);
      }
    }
  } catch (err) {
    // A leader that lost its lease mid-tick is fenced out (TR31): that is the fence working, not an error.
    if (err instanceof LeadershipLost) fenced++;
    else errors.push(String(err));
  }
  await see();
  await new Promise((r) => setTimeout(r, Math.floor(random() * 4)));
}
console.log(JSON.stringify({ event: 'summary', worker: name, maxSeen, passes, fenced, errors }));
await store.close();
