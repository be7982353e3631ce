import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { effectiveCap } from '../../src/fleet/cap.js';
import { stageRank } from '../../src/fleet/candidate.js';
import type { PassReport } from '../../src/fleet/engine/pass.js';
import type { SharedReading } from '../../src/fleet/engine/reading.js';
import type { Store } from '../../src/store/store.js';
import { FakeForge } from '../helpers/fake-forge.js';
import { AUTOLAND, FakeLauncher, makeHarness, ManualClock, type Harness } from '../helpers/fleet.js';
import { testEngine, testStore } from '../helpers/test-store.js';

// SC08/SC09 under random interleavings: yoke processes on one store, each reading its share of three installations,
// passes run on any of them, runs ending, readers killed and joining. At every step: the cap holds and no subject has
// two live runs; every pass launches landers before fixes before new work, across installations read by different
// processes; and a killed reader's installations are read again by the survivors within two ticks.

const POLICY = { globalCap: 3, repoCaps: {}, landerAttemptsPerHead: 2 };
const REPOS = ['one/a', 'one/b', 'two/a', 'three/a'] as const;
const INSTALLATION: Record<(typeof REPOS)[number], number> = { 'one/a': 1, 'one/b': 1, 'two/a': 2, 'three/a': 3 };
const LEASE = 180_000;

type Step =
  | { t: 'pass'; on: number; kind: 'scheduler' | 'reaper' | 'kick' }
  | { t: 'read'; on: number }
  | { t: 'complete'; pick: number; ok: boolean; accept: boolean }
  | { t: 'issue'; repo: number }
  | { t: 'kill'; on: number }
  | { t: 'join' };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      t: fc.constant('pass' as const),
      on: fc.nat(5),
      kind: fc.constantFrom('scheduler' as const, 'reaper' as const, 'kick' as const),
    }),
  },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('read' as const), on: fc.nat(5) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant('complete' as const),
      pick: fc.nat(10),
      ok: fc.boolean(),
      accept: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('issue' as const), repo: fc.nat(REPOS.length - 1) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('kill' as const), on: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.constant({ t: 'join' as const }) },
);

interface Process {
  h: Harness;
  reading: SharedReading;
}

interface World {
  store: Store;
  clock: ManualClock;
  github: FakeForge;
  launcher: FakeLauncher;
  alive: Process[];
}

async function join(w: World): Promise<void> {
  const forge = new FakeForge();
  forge.repos = w.github.repos;
  forge.installations = w.github.installations;
  const h = makeHarness({ store: w.store, clock: w.clock, forge, launcher: w.launcher, policy: POLICY });
  await h.registered;
  const reading = h.engine.reading(LEASE);
  await reading.start();
  w.alive.push({ h, reading });
}

async function world(): Promise<World> {
  const clock = new ManualClock();
  const github = new FakeForge();
  github.installations = [];
  for (const r of REPOS) {
    github.addRepo(r, AUTOLAND, INSTALLATION[r]);
    github.addIssue(r, 1);
  }
  const w: World = { store: testStore(clock), clock, github, launcher: new FakeLauncher(), alive: [] };
  for (let i = 0; i < 3; i++) await join(w);
  return w;
}

let shaSeq = 0;

/** A live run finishes: it reports and exits, and what it made lands on GitHub. */
async function complete(w: World, step: Extract<Step, { t: 'complete' }>): Promise<void> {
  const live = (await w.store.runs.listLive()).filter((r) => w.launcher.table.running.has(r.id));
  if (live.length === 0) return;
  const run = live[step.pick % live.length]!;
  const verdict = run.kind === 'lander' && step.ok ? (step.accept ? 'accept' : 'reject') : null;
  await w.store.runs.recordReport(run.id, { outcome: step.ok ? 'success' : 'failure', verdict, summary: null }, 0);
  if (step.ok && run.kind.startsWith('afk') && run.issueNumber !== null)
    w.github.addPull(run.repo, {
      number: 100 + ++shaSeq,
      headSha: (++shaSeq).toString(16).padStart(7, '0'),
      labels: [],
      body: `Closes #${run.issueNumber}\n\nYoke-Run: ${run.id}`,
    });
  if (step.ok && run.kind === 'fix' && run.prNumber !== null) {
    const pull = w.github.repo(run.repo).pulls.find((p) => p.number === run.prNumber);
    if (pull) pull.headSha = (++shaSeq).toString(16).padStart(7, '0');
  }
  w.launcher.finish(run.id);
}

function checkPass(p: PassReport): void {
  const ranks = p.outcomes.filter((o) => o.result.kind === 'launched').map((o) => stageRank(o.candidate.stage));
  expect([...ranks].sort((a, b) => a - b)).toEqual(ranks);
}

async function checkInvariants(w: World): Promise<void> {
  for (const run of await w.store.runs.listAll(10_000)) {
    expect(run.capAtLaunch).toBe(effectiveCap({ globalCap: POLICY.globalCap, repoCaps: {} }, run.repo));
    expect(run.liveAtLaunch).toBeLessThanOrEqual(run.capAtLaunch);
  }
  const live = await w.store.runs.listLive();
  expect(live.length).toBeLessThanOrEqual(POLICY.globalCap);
  expect(new Set(live.map((r) => `${r.repo}:${r.subject}`)).size).toBe(live.length);
  // No installation is held by two processes.
  const held = (await w.store.installationLeases.current()).map((l) => l.installationId);
  expect(new Set(held).size).toBe(held.length);
}

/** Every live process's reading tick, once. */
async function readAll(w: World): Promise<number[][]> {
  const out: number[][] = [];
  for (const p of w.alive) out.push((await p.reading.tick()).held);
  return out;
}

/** What the runs launched, over all the worlds: a property that launched nothing would prove nothing. */
const launched = { lander: 0, fix: 0, afk: 0 };

describe('SC08 SC09 the reading shared, under random interleavings', () => {
  it('SC08 SC09 keeps the cap, one run per subject and stage order across processes, and reads a killed reader’s installations again within two ticks', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 5, maxLength: 30 }), async (steps) => {
        const w = await world();
        await readAll(w);
        for (const step of steps) {
          const on = w.alive.length ? w.alive[('on' in step ? step.on : 0) % w.alive.length]! : null;
          switch (step.t) {
            case 'pass': {
              if (!on) break;
              const p = await (step.kind === 'scheduler'
                ? on.h.engine.schedulerTick()
                : step.kind === 'reaper'
                  ? on.h.engine.reaperTick()
                  : on.h.engine.kick());
              checkPass(p);
              for (const o of p.outcomes)
                if (o.result.kind === 'launched')
                  launched[o.candidate.stage === 'new_work' ? 'afk' : o.candidate.stage]++;
              break;
            }
            case 'read':
              await on?.reading.tick();
              break;
            case 'complete':
              await complete(w, step);
              break;
            case 'issue':
              w.github.addIssue(REPOS[step.repo]!, 10 + ++shaSeq);
              break;
            case 'kill': {
              if (!on || w.alive.length === 1) break;
              on.h.engine.stop();
              await w.store.processes.end(on.h.engine.processId);
              w.alive = w.alive.filter((p) => p !== on);
              w.clock.advance(1_000);
              // Within two ticks of the survivors, every installation is read again, by exactly one of them.
              await readAll(w);
              const held = (await readAll(w)).flat();
              expect(held.sort()).toEqual([1, 2, 3]);
              break;
            }
            case 'join':
              if (w.alive.length < 5) await join(w);
              break;
          }
          await checkInvariants(w);
        }
      }),
      { numRuns: testEngine === 'PostgreSQL' ? 10 : 40 },
    );
    expect(launched.afk).toBeGreaterThan(0);
    expect(launched.lander).toBeGreaterThan(0);
  });
});
