import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDb, type Db } from '../../src/store/sql/db.js';
import { wrapDb } from '../../src/store/store.js';
import type { LaunchSpec } from '../../src/launcher/launcher.js';
import { AUTOLAND, FakeLauncher, ManualClock, ProcessTable, makeHarness } from '../helpers/fleet.js';
import { FakeForge } from '../helpers/fake-forge.js';

// Kill a pass between any two of its store writes (and just before any
// launcher start, the gap between recording a run and starting it), restart
// on the same database file, and check nothing is lost or duplicated.

class Crash extends Error {}

/** The database as a pass sees it, dying at its k-th write: every later write fails too. */
interface CrashState {
  /** Store writes and launcher starts so far. */
  writes: number;
  crashed: boolean;
  at: number;
}

function crashAt(db: Db, k: number, state: CrashState): Db {
  const wrapStatement = (st: object) =>
    new Proxy(st, {
      get(t, p) {
        const v = Reflect.get(t, p);
        if (p === 'run') {
          return (...args: unknown[]) => {
            if (state.crashed || ++state.writes === state.at) {
              state.crashed = true;
              throw new Crash(`killed at write ${state.at}`);
            }
            return (v as (...a: unknown[]) => unknown).apply(t, args);
          };
        }
        return typeof v === 'function' ? v.bind(t) : v;
      },
    });
  return new Proxy(db, {
    get(t, p) {
      if (p === 'prepare') return (sql: string) => wrapStatement(t.prepare(sql));
      const v = Reflect.get(t, p);
      return typeof v === 'function' ? v.bind(t) : v;
    },
  }) as Db;
}

class DyingLauncher extends FakeLauncher {
  constructor(
    table: ProcessTable,
    private readonly state: CrashState,
  ) {
    super(table);
  }
  override async start(spec: LaunchSpec) {
    if (this.state.crashed || ++this.state.writes === this.state.at) {
      this.state.crashed = true;
      throw new Crash('killed before the launcher started the run');
    }
    return super.start(spec);
  }
}

function world(): FakeForge {
  const forge = new FakeForge();
  forge.addRepo('acme/api', AUTOLAND);
  forge.addRepo('acme/web', {});
  forge.addIssue('acme/api', 1);
  forge.addIssue('acme/api', 2);
  forge.addIssue('acme/web', 3);
  forge.addPull('acme/api', { number: 10, headSha: 'aaaaaaa', body: `Closes #7\n\nYoke-Run: ${SEED_RUN}` });
  return forge;
}

/** The AFK run that opened claim PR #10, ended before the story starts (not a write the crash counts). */
const SEED_RUN = 'seed-afk-7';
async function seed(db: ReturnType<typeof openDb>): Promise<void> {
  const store = wrapDb(db);
  if (await store.runs.get(SEED_RUN)) return;
  const at = new ManualClock().now() - 60_000;
  await store.repos.ensure('acme/api', 1, at);
  await store.runs.insert({
    id: SEED_RUN,
    repo: 'acme/api',
    kind: 'afk_auto',
    subject: 'issue#7',
    issueNumber: 7,
    prNumber: null,
    headSha: null,
    launchedAt: at,
    budgetDeadline: at + 60_000,
    launcher: 'command',
    launcherRef: null,
    secretHash: null,
    capAtLaunch: 1,
    liveAtLaunch: 1,
  });
  await store.runs.end(SEED_RUN, 'success', null, at);
}

const dir = mkdtempSync(join(tmpdir(), 'yoke-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const POLICY = { globalCap: 3 };

describe('a pass killed between store writes', () => {
  it('SP10 re-derives the same candidates after a restart, losing and duplicating no run, for every crash point', async () => {
    // The uncrashed pass: how many writes it makes. The candidate set, with the cap lifted so none is hidden.
    const probeState: CrashState = { writes: 0, crashed: false, at: Number.MAX_SAFE_INTEGER };
    const baseDb = openDb(join(dir, 'probe.db'));
    await seed(baseDb);
    const probe = makeHarness({
      store: wrapDb(crashAt(baseDb, Number.MAX_SAFE_INTEGER, probeState)),
      forge: world(),
      launcher: new DyingLauncher(new ProcessTable(), probeState),
      policy: POLICY,
    });
    const expected = (await probe.engine.previewCandidates()).map((c) => `${c.repo}:${c.subject}`).sort();
    probeState.writes = 0;
    const first = await probe.engine.schedulerTick();
    const totalWrites = probeState.writes;
    expect(expected).toEqual(['acme/api:issue#1', 'acme/api:issue#2', 'acme/api:pr#10', 'acme/web:issue#3']);
    expect(first.outcomes.filter((o) => o.result.kind === 'launched')).toHaveLength(3);
    expect(totalWrites).toBeGreaterThanOrEqual(6);
    baseDb.close();

    for (let k = 1; k <= totalWrites; k++) {
      const path = join(dir, `crash-${k}.db`);
      const forge = world();
      const table = new ProcessTable();
      const clock = new ManualClock();
      const state: CrashState = { writes: 0, crashed: false, at: Number.MAX_SAFE_INTEGER };
      const db = openDb(path);
      await seed(db);
      const doomed = makeHarness({
        store: wrapDb(crashAt(db, k, state)),
        forge,
        launcher: new DyingLauncher(table, state),
        clock,
        policy: POLICY,
      });
      // Counting starts with the pass: the harness's own process registration is not one of its writes.
      await doomed.registered;
      Object.assign(state, { writes: 0, at: k });
      await doomed.engine.schedulerTick().catch((err) => {
        if (!(err instanceof Crash)) throw err;
      });
      expect(state.crashed).toBe(true);
      db.close();

      // Restart: the same file, the same world out there, a new yoke.
      const reopened = wrapDb(openDb(path));
      const before = new Set((await reopened.runs.listAll()).map((r) => r.id).filter((id) => id !== SEED_RUN));
      const fresh = makeHarness({
        store: reopened,
        forge,
        launcher: new FakeLauncher(table),
        clock,
        policy: { globalCap: 100 },
      });
      await fresh.engine.recover();
      const candidates = await fresh.engine.previewCandidates();

      const survivors = await reopened.runs.listLive();
      const liveSubjects = survivors.map((r) => `${r.repo}:${r.subject}`);
      const candidateSubjects = candidates.map((c) => `${c.repo}:${c.subject}`);
      expect(
        candidateSubjects.filter((c) => liveSubjects.includes(c)),
        `crash at write ${k}`,
      ).toEqual([]);
      expect([...candidateSubjects, ...liveSubjects].sort(), `crash at write ${k}`).toEqual(expected);

      // Every process started before the crash is tracked by exactly one live run.
      for (const [runId] of table.running)
        expect((await reopened.runs.get(runId))?.status, `process ${runId} after crash at ${k}`).toBe('live');
      // Every run recorded before the crash is either running out there or was closed as never started.
      for (const id of before) {
        const run = (await reopened.runs.get(id))!;
        if (!table.running.has(id))
          expect([run.status, run.outcome], `run ${id} after crash at ${k}`).toEqual(['ended', 'cancelled']);
      }
      // Nothing doubled: one live run and one process per subject.
      const live = await reopened.runs.listLive();
      expect(new Set(live.map((r) => `${r.repo}:${r.subject}`)).size).toBe(live.length);
      const procs = [...table.running.values()].map((s) => `${s.repo.fullName}:${s.subject}`);
      expect(new Set(procs).size).toBe(procs.length);
      expect(live.length).toBeLessThanOrEqual(POLICY.globalCap);
      await reopened.close();
    }
  });
});
