import { describe, expect, it, vi } from 'vitest';
import type { SharedReading } from '../../src/fleet/engine/reading.js';
import { listingKey, viewKey } from '../../src/store/shared-reads.js';
import type { Store } from '../../src/store/store.js';
import { FakeForge } from '../helpers/fake-forge.js';
import { AUTOLAND, addClaimPull, makeHarness, ManualClock, type Harness } from '../helpers/fleet.js';
import { testStore } from '../helpers/test-store.js';
import { PassMemo } from '../../src/fleet/spawn/pass-memo.js';
import type { RepoFacts } from '../../src/fleet/repo-facts.js';

// SC08/SC09 with the engine: yoke processes on one store share the reading of the fleet by installation, and the pass,
// whichever process runs it, decides over every installation's facts (its own read, the rest from what their readers
// shared), in stage order across the fleet, never reading again from GitHub what another process reads.

const LEASE = 180_000;
const INSTALLATIONS = [1, 2, 3, 4];

interface Process {
  h: Harness;
  reading: SharedReading;
}

/** A fleet on one GitHub: two repositories per installation, each with one AFK issue. */
function github(): FakeForge {
  const forge = new FakeForge();
  forge.installations = [];
  for (const i of INSTALLATIONS)
    for (const r of ['a', 'b']) {
      forge.addRepo(`org${i}/${r}`, AUTOLAND, i);
      forge.addIssue(`org${i}/${r}`, 1);
    }
  return forge;
}

/** Another yoke process on the same GitHub: its own client (its own counts), the same repositories. */
function sameGithub(of: FakeForge): FakeForge {
  const forge = new FakeForge();
  forge.repos = of.repos;
  forge.installations = of.installations;
  return forge;
}

async function process(store: Store, clock: ManualClock, forge: FakeForge, leads: boolean): Promise<Process> {
  const h = makeHarness({ store, clock, forge, policy: { globalCap: 20 }, leads: async () => leads });
  await h.registered;
  const reading = h.engine.reading(LEASE);
  await reading.start();
  return { h, reading };
}

const reposOf = (installations: readonly number[]) => installations.flatMap((i) => [`org${i}/a`, `org${i}/b`]);
const sorted = (xs: Iterable<string>) => [...xs].sort();

async function twoProcesses() {
  const clock = new ManualClock();
  const store = testStore(clock);
  const gh = github();
  const a = await process(store, clock, gh, true);
  const b = await process(store, clock, sameGithub(gh), false);
  const ta = await a.reading.tick();
  const tb = await b.reading.tick();
  return { clock, store, gh, a, b, ta, tb };
}

describe('SC09 the reading shared, one pass deciding', () => {
  it('SC09 a pass decides over every installation: its own read from GitHub, the others from what their reader shared, none read twice', async () => {
    const { a, b, ta, tb } = await twoProcesses();
    // Each process reads two installations, never one both: and each read and shared its repositories.
    expect([ta.held.length, tb.held.length]).toEqual([2, 2]);
    expect([...ta.held, ...tb.held].sort()).toEqual(INSTALLATIONS);
    expect([ta.shared, tb.shared]).toEqual([4, 4]);
    a.h.forge.readsByRepo.clear();
    a.h.forge.calls.listRepos = 0;
    const pass = await a.h.engine.schedulerTick();
    // Every repository's issue is launched, by the one pass, whoever read it.
    expect(sorted(a.h.launcher.starts.map((s) => s.repo.fullName))).toEqual(sorted(reposOf(INSTALLATIONS)));
    expect(pass.deferred).toEqual([]);
    // The pass read from GitHub only the installations its own process reads: listings and views.
    expect(sorted(a.h.forge.readsByRepo.keys())).toEqual(sorted(reposOf(ta.held)));
    expect(a.h.forge.calls.listRepos).toBe(ta.held.length);
    expect(b.h.launcher.starts).toEqual([]);
  });

  it("SC10 an installation's repositories changed, told to a process that does not read it: its reader lists them again at its next tick, and the pass decides over the new one", async () => {
    const { a, b, store, gh, tb } = await twoProcesses();
    await a.h.engine.schedulerTick();
    const theirs = tb.held[0]!;
    gh.addRepo(`org${theirs}/c`, AUTOLAND, theirs);
    gh.addIssue(`org${theirs}/c`, 1);
    // The installation_repositories webhook reaches process a, which does not read the installation.
    await a.h.engine.context().relist(theirs);
    expect(a.h.forge.relisted).toEqual([theirs]);
    expect(await store.sharedReads.wanted([theirs])).toEqual([listingKey(theirs)]);
    await b.reading.tick();
    expect(b.h.forge.relisted).toEqual([theirs]);
    expect(await store.sharedReads.wanted([theirs])).toEqual([]);
    await a.h.engine.schedulerTick();
    expect(a.h.launcher.starts.map((s) => s.repo.fullName)).toContain(`org${theirs}/c`);
  });

  it('SC08 a repository its reader reads before any pass listed it is recorded as first seen then: the commands found in it count from there', async () => {
    const { clock, store, tb } = await twoProcesses();
    const theirs = `org${tb.held[0]}/a`;
    const state = await store.repos.get(theirs);
    expect([state?.installationId, state?.firstSeenAt]).toEqual([tb.held[0], clock.now()]);
  });

  it('SC08 a reader whose tick outlasts its installations’ lease renews them as its reads end: no other process takes them for unread meanwhile', async () => {
    const { clock, store, gh, a, b, tb } = await twoProcesses();
    const theirs = b.h.forge as FakeForge;
    const read = theirs.readRepo.bind(theirs);
    // Each read takes half the lease: the tick's four reads take two leases' time.
    theirs.readRepo = async (repo, o) => {
      clock.advance(LEASE / 2);
      return read(repo, o);
    };
    const tick = await b.reading.tick();
    expect(tick.read).toBe(2 * tb.held.length);
    expect(await store.installationLeases.heldBy(b.h.engine.processId)).toEqual(tb.held);
    // The leader's pass takes what that tick shared: it reads none of those repositories from GitHub itself.
    const readByLeader = () => reposOf(tb.held).map((name) => gh.readsByRepo.get(name) ?? 0);
    const was = readByLeader();
    await a.h.engine.schedulerTick();
    expect(readByLeader()).toEqual(was);
  });

  it('SC03 a reader reads a repository it never read before the probes that came due, when its budget covers one read', async () => {
    const { READ_ESTIMATE_POINTS } = await import('../../src/fleet/spawn/pass-deps.js');
    const { gh, b, tb } = await twoProcesses();
    const id = tb.held[0]!;
    // A repository that joined the installation: listed last, and never read.
    gh.addRepo(`org${id}/c`, AUTOLAND, id);
    const theirs = b.h.forge as FakeForge;
    const read = theirs.readRepo.bind(theirs);
    theirs.readRepo = async (repo, o) => {
      const at = repo.installationId;
      if (theirs.points.has(at)) theirs.points.set(at, theirs.points.get(at)! - READ_ESTIMATE_POINTS);
      return read(repo, o);
    };
    theirs.points.set(id, READ_ESTIMATE_POINTS);
    const before = (n: string) => theirs.readsByRepo.get(`org${id}/${n}`) ?? 0;
    const was = ['a', 'b', 'c'].map(before);
    const tick = await b.reading.tick();
    expect(['a', 'b', 'c'].map((n, i) => before(n) - was[i]!)).toEqual([0, 0, 1]);
    expect(tick.deferred).toBe(2);
  });

  it('SC10 the pass takes again the facts of repositories another process reads, while what it shared stands', async () => {
    const { a, b, tb } = await twoProcesses();
    await a.h.engine.schedulerTick();
    await b.reading.tick();
    await a.h.engine.schedulerTick();
    const taken = vi.spyOn(PassMemo.prototype, 'again');
    try {
      await a.h.engine.schedulerTick();
      const again = taken.mock.results.flatMap((r) => (r.value ? [(r.value as RepoFacts).repo.fullName] : []));
      expect(sorted(again.filter((name) => tb.held.some((i) => name.startsWith(`org${i}/`))))).toEqual(
        sorted(reposOf(tb.held)),
      );
    } finally {
      taken.mockRestore();
    }
  });

  it('SC09 what changes on GitHub reaches the pass once its reader has read it: the pass never reads it itself', async () => {
    const { a, b, tb } = await twoProcesses();
    await a.h.engine.schedulerTick();
    const theirs = `org${tb.held[0]}/a`;
    a.h.forge.addIssue(theirs, 2);
    await a.h.engine.schedulerTick();
    expect(a.h.launcher.starts.filter((s) => s.repo.fullName === theirs).map((s) => s.subject)).toEqual(['issue#1']);
    await b.reading.tick();
    await a.h.engine.schedulerTick();
    expect(a.h.launcher.starts.filter((s) => s.repo.fullName === theirs).map((s) => s.subject)).toEqual([
      'issue#1',
      'issue#2',
    ]);
    expect(a.h.forge.readsByRepo.get(theirs)).toBeUndefined();
  });

  it('SC09 landers go before new work across installations that different processes read', async () => {
    const { a, b, ta, tb } = await twoProcesses();
    // One slot; new work in every installation, and a claim PR to validate in one process B reads.
    const theirs = `org${tb.held[0]}/b`;
    await addClaimPull(a.h, theirs, { number: 40, issue: 1, headSha: 'c'.repeat(40) });
    a.h.forge.repo(theirs).issues = [];
    await b.reading.tick();
    const small = makeHarness({ store: a.h.store, clock: a.h.clock, forge: a.h.forge, policy: { globalCap: 1 } });
    await small.registered;
    // A process that is not B reads B's claim PR from what B shared, and validates it before any new work.
    await small.engine.schedulerTick();
    expect(small.launcher.starts.map((s) => [s.kind, s.repo.fullName, s.subject])).toEqual([
      ['lander', theirs, 'pr#40'],
    ]);
    expect(ta.held).not.toContain(tb.held[0]);
  });

  it('SC09 a repository whose reader has not shared it yet waits for a later pass, and says why and what to do', async () => {
    const { a, b, gh } = await twoProcesses();
    gh.addRepo('late/one', AUTOLAND, 9);
    gh.addIssue('late/one', 1);
    // B has taken installation 9's lease and not read it yet.
    expect(await a.h.store.installationLeases.claim(9, b.h.engine.processId, LEASE)).toBe(true);
    const pass = await a.h.engine.schedulerTick();
    expect(pass.deferred).toEqual([{ repo: 'late/one', installationId: 9, points: 0, reader: b.h.engine.processId }]);
    const why = pass.waiting.find((w) => w.repo === 'late/one')!.reason;
    expect([why.code, why.message, why.recovery]).toEqual([
      'reader_pending',
      `late/one was not read this pass: yoke process ${b.h.engine.processId} reads installation 9, and has not shared what it found there yet.`,
      'Nothing to do: the pass decides on it once that process has read it, within a tick. If that process is gone, another takes its installations within two ticks; `yoke doctor` shows which process reads which installation.',
    ]);
    expect(a.h.forge.readsByRepo.get('late/one')).toBeUndefined();
    expect(a.h.launcher.starts.some((s) => s.repo.fullName === 'late/one')).toBe(false);
  });

  it('SC09 a shared body another yoke wrote in another shape, or that is not JSON, is not taken: the repository waits, the pass goes on', async () => {
    const { a, tb } = await twoProcesses();
    const theirs = [`org${tb.held[0]}/a`, `org${tb.held[0]}/b`];
    await a.h.store.sql.run('UPDATE shared_reads SET body = ?, digest = ? WHERE key = ?', [
      '{"shape":2,"view":{}}',
      'other',
      viewKey(theirs[0]!),
    ]);
    await a.h.store.sql.run('UPDATE shared_reads SET body = ?, digest = ? WHERE key = ?', [
      'not json',
      'broken',
      viewKey(theirs[1]!),
    ]);
    const pass = await a.h.engine.schedulerTick();
    expect(sorted(pass.deferred.map((d) => d.repo))).toEqual(sorted(theirs));
    expect(a.h.launcher.starts.filter((s) => theirs.includes(s.repo.fullName))).toEqual([]);
    expect(a.h.launcher.starts).toHaveLength(6);
  });

  it('SC09 a webhook on one process has the reader of that repository read it again first, and say so', async () => {
    const { a, b, tb } = await twoProcesses();
    const theirs = `org${tb.held[0]}/a`;
    // Everything launched and read again: nothing changes on GitHub from here.
    await a.h.engine.schedulerTick();
    await b.reading.tick();
    expect((await b.reading.tick()).shared).toBe(0);
    a.h.fleet.wake(theirs);
    await a.h.engine.kick();
    const tick = await b.reading.tick();
    expect(tick.wanted).toBe(1);
    // Read again, it is not wanted any more.
    expect((await b.reading.tick()).wanted).toBe(0);
  });

  it('SC09 the pass a webhook asks for starts once its want is recorded, so the pass sees it on any process', async () => {
    const { a, tb } = await twoProcesses();
    const theirs = `org${tb.held[0]}/a`;
    await a.h.engine.schedulerTick();
    // The want's write held until released; each pass's start seen where it reads the live runs.
    const events: string[] = [];
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { sharedReads, runs } = a.h.store;
    const want = sharedReads.want.bind(sharedReads);
    sharedReads.want = async (key) => {
      await gate;
      await want(key);
      events.push(`wanted ${key}`);
    };
    const listLive = runs.listLive.bind(runs);
    runs.listLive = () => (events.push('pass'), listLive());
    a.h.fleet.wake(theirs);
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(events).toEqual([]);
    release();
    await vi.waitFor(() => expect(events).toEqual([`wanted ${viewKey(theirs)}`, 'pass']));
  });

  it("SC09 a killed reader's installations are read again at the survivor's next tick, and a third process joining takes a share and changes no outcome", async () => {
    const { clock, store, gh, a, b, tb } = await twoProcesses();
    await store.processes.end(b.h.engine.processId);
    // B itself, should it still run (stalled past its lease), gives its installations up and reads none.
    expect(await b.reading.tick()).toEqual({ held: [], read: 0, shared: 0, wanted: 0, deferred: 0 });
    expect(await store.installationLeases.heldBy(b.h.engine.processId)).toEqual([]);
    // Before A's next tick, nobody reads B's installations: the pass reads them itself.
    a.h.forge.readsByRepo.clear();
    await a.h.engine.schedulerTick();
    for (const repo of reposOf(tb.held)) expect(a.h.forge.readsByRepo.get(repo)).toBe(1);
    clock.advance(1_000);
    const after = await a.reading.tick();
    expect(after.held).toEqual(INSTALLATIONS);
    a.h.forge.readsByRepo.clear();
    await a.h.engine.schedulerTick();
    // Alone, it reads B's installations itself.
    for (const repo of reposOf(tb.held)) expect(a.h.forge.readsByRepo.get(repo)).toBe(1);
    const launched = a.h.launcher.starts.length;
    expect(launched).toBe(8);
    // A third process joins: the reading is spread again, and nothing is launched twice.
    const c = await process(store, clock, sameGithub(gh), false);
    clock.advance(1_000);
    const [ta, tc] = [await a.reading.tick(), await c.reading.tick()];
    const ta2 = await a.reading.tick();
    expect(tc.held.length).toBeGreaterThan(0);
    expect(ta2.held.filter((i) => tc.held.includes(i))).toEqual([]);
    expect(ta.held.length + tc.held.length).toBeGreaterThanOrEqual(INSTALLATIONS.length - 1);
    await a.h.engine.schedulerTick();
    expect(a.h.launcher.starts).toHaveLength(launched);
    expect(await store.runs.countLive()).toBe(8);
  });
});
