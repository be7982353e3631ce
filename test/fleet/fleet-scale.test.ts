import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import type { Timers } from '../../src/kernel/clock.js';
import { DEFAULT_LEADERSHIP, Leadership } from '../../src/leadership.js';
import { BudgetBook, BudgetStopped, GITHUB_SECONDARY_LIMITS } from '../../src/forge/github/budget.js';
import { budgeted, DEFAULT_CLIENT_POLICY, yokeOctokit } from '../../src/forge/github/octokit.js';
import { openStore } from '../../src/store/store.js';
import { STOP_WAIT_MS, Ticks } from '../../src/ticks.js';
import { gate, makeHarness, ManualClock, recordingLog, until } from '../helpers/fleet.js';

// Many installations at once (SC05), a 304 charged as GitHub charges it (SC03), and a stop that is quick and
// gives the lead up (SC06), all on a fake clock.

/** Timers a test fires by hand, by the interval each was set for. */
class HandTimers implements Timers {
  intervals = new Map<number, { fn: () => void; ms: number }>();
  private next = 1;
  setInterval(fn: () => void, ms: number): unknown {
    const id = this.next++;
    this.intervals.set(id, { fn, ms });
    return id;
  }
  clearInterval(handle: unknown): void {
    this.intervals.delete(Number(handle));
  }
  fire(ms: number): void {
    for (const t of [...this.intervals.values()]) if (t.ms === ms) t.fn();
  }
}

const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

afterEach(() => {
  nock.cleanAll();
});

describe('installations read together', () => {
  it("SC05 each installation's repositories are read on its own bound, all installations at once: one that hangs holds no other", async () => {
    const h = makeHarness({ policy: { globalCap: 20, readConcurrency: 2 } });
    for (let i = 0; i < 4; i++) {
      h.forge.addRepo(`slow/r${i}`, {}, 1);
      h.forge.addRepo(`fast/r${i}`, {}, 2);
      h.forge.addIssue(`slow/r${i}`, 1);
      h.forge.addIssue(`fast/r${i}`, 1);
    }
    const slow = gate();
    const reading = new Map<number, number>();
    const peak = new Map<number, number>();
    const read = h.forge.readRepo.bind(h.forge);
    h.forge.readRepo = async (repo, o) => {
      const id = repo.installationId;
      reading.set(id, (reading.get(id) ?? 0) + 1);
      peak.set(id, Math.max(peak.get(id) ?? 0, reading.get(id)!));
      if (id === 1) await slow.opened;
      reading.set(id, reading.get(id)! - 1);
      return read(repo, o);
    };
    const pass = h.engine.schedulerTick();
    await until(() => (h.forge.readsByRepo.get('fast/r3') ?? 0) > 0, 'installation 2 read through');
    // Installation 2 was read through while installation 1 holds both of its slots.
    expect([0, 1, 2, 3].map((i) => h.forge.readsByRepo.get(`fast/r${i}`))).toEqual([1, 1, 1, 1]);
    expect(reading.get(1)).toBe(2);
    slow.open();
    const report = await pass;
    expect(peak.get(1)).toBe(2);
    expect(peak.get(2)).toBeLessThanOrEqual(2);
    // The decisions are made in the listing's order whatever order the reads ended in.
    expect(report.candidates.map((c) => c.repo)).toEqual([
      ...[0, 1, 2, 3].map((i) => `slow/r${i}`),
      ...[0, 1, 2, 3].map((i) => `fast/r${i}`),
    ]);
  });

  it("SC05 each installation spends its own budget: one that is short defers its own repositories and no other's", async () => {
    const h = makeHarness({ policy: { globalCap: 20 } });
    for (let i = 0; i < 3; i++) {
      h.forge.addRepo(`spent/r${i}`, {}, 1);
      h.forge.addRepo(`fresh/r${i}`, {}, 2);
    }
    h.forge.points.set(1, 1); // installation 1 has one point left on its busiest endpoint this minute
    const configs: string[] = [];
    const readConfig = h.forge.readConfig.bind(h.forge);
    h.forge.readConfig = async (repo) => {
      configs.push(repo.fullName);
      return readConfig(repo);
    };
    const pass = await h.engine.schedulerTick();
    // Nor does any producer read a deferred repository's opt-in file: a pass spends nothing on what it left.
    expect(configs.filter((c) => c.startsWith('spent/'))).toEqual([]);
    expect(pass.deferred.map((d) => [d.repo, d.installationId])).toEqual([
      ['spent/r0', 1],
      ['spent/r1', 1],
      ['spent/r2', 1],
    ]);
    expect([0, 1, 2].map((i) => h.forge.readsByRepo.get(`fresh/r${i}`))).toEqual([1, 1, 1]);
  });

  it('SC05 the GitHub client bounds requests in flight per installation, across every Octokit it makes for one', async () => {
    nock.disableNetConnect();
    const Octokit = yokeOctokit(
      openStore(':memory:'),
      new ManualClock(),
      { requests: 0, notModified: 0 },
      {
        ...DEFAULT_CLIENT_POLICY,
        maxInFlight: 2,
        retry: { enabled: false, doNotRetry: [] },
        throttle: { enabled: false, maxRetries: 0, maxWaitSeconds: 0 },
      },
    );
    const held = gate();
    const arrived = { one: 0, two: 0 };
    nock('https://api.github.com')
      .get(/\/repos\/one\/r\d/)
      .times(4)
      .reply(function () {
        arrived.one++;
        return held.opened.then(() => [200, {}]) as never;
      })
      .get(/\/repos\/two\/r\d/)
      .times(2)
      .reply(function () {
        arrived.two++;
        return [200, {}];
      });
    // Two clients of installation 1 share its bound; installation 2's requests do not wait behind them.
    const a = new Octokit({ auth: { token: 'a', installationId: 1 } });
    const b = new Octokit({ auth: { token: 'b', installationId: 1 } });
    const c = new Octokit({ auth: { token: 'c', installationId: 2 } });
    const ones = Array.from({ length: 4 }, (_, i) =>
      (i % 2 ? a : b).request('GET /repos/one/{repo}', { repo: `r${i}` }),
    );
    await Promise.all([0, 1].map((i) => c.request('GET /repos/two/{repo}', { repo: `r${i}` })));
    expect(arrived).toEqual({ one: 2, two: 2 });
    held.open();
    await Promise.all(ones);
    expect(arrived.one).toBe(4);
    expect(nock.pendingMocks()).toEqual([]);
  });
});

describe('what a request costs', () => {
  it('SC03 a 304 costs its endpoint a point, as any GET, and costs the primary limit nothing; a 200 costs both', async () => {
    const { ProbotOctokit } = await import('probot');
    nock.disableNetConnect();
    const clock = new ManualClock();
    const book = new BudgetBook(GITHUB_SECONDARY_LIMITS, clock.now);
    const store = openStore(':memory:');
    const { conditionalCache } = await import('../../src/forge/github/conditional-cache.js');
    const Client = ProbotOctokit.plugin(
      conditionalCache(store.httpCache, clock.now),
      budgeted(book, async (ms) => clock.advance(ms)),
    ).defaults({ retry: { enabled: false }, throttle: { enabled: false } });
    const o = new Client({ auth: { token: 't', installationId: 7 } });
    const rate = (remaining: number) => ({
      'x-ratelimit-limit': '5000',
      'x-ratelimit-remaining': String(remaining),
      'x-ratelimit-reset': String(Math.floor(clock.now() / 1000) + 3600),
      'x-ratelimit-resource': 'core',
    });
    nock('https://api.github.com')
      .get('/repos/acme/api/issues')
      .reply(200, [], { etag: '"e1"', ...rate(4000) })
      .get('/repos/acme/api/issues')
      .matchHeader('if-none-match', '"e1"')
      .reply(304, '', rate(4000))
      .get('/repos/acme/api/pulls')
      .reply(200, [], rate(3999));
    const budget = book.for('i7');
    const endpoint = 'GET /repos/{owner}/{repo}/issues';
    const full = Math.floor(900 * 0.8);
    await o.request('GET /repos/{owner}/{repo}/issues', { owner: 'acme', repo: 'api' });
    expect([budget.endpointLeft(endpoint), budget.remaining().primary]).toEqual([full - 1, 4000 - 1000]);
    await o.request('GET /repos/{owner}/{repo}/issues', { owner: 'acme', repo: 'api' });
    // The 304: one more point on its endpoint; the primary limit as it was.
    expect([budget.endpointLeft(endpoint), budget.remaining().primary]).toEqual([full - 2, 4000 - 1000]);
    await o.request('GET /repos/{owner}/{repo}/pulls', { owner: 'acme', repo: 'api' });
    expect(budget.endpointLeft('GET /repos/{owner}/{repo}/pulls')).toBe(full - 1);
    expect(budget.remaining().primary).toBe(3999 - 1000);
    expect(nock.pendingMocks()).toEqual([]);
  });

  it('SC06 a request held for its budget when yoke stops is refused at once, never sent', async () => {
    const clock = new ManualClock();
    const book = new BudgetBook(
      { pointsPerMinutePerEndpoint: 1, contentWritesPerMinute: 1, contentWritesPerHour: 1, headroom: 1 },
      clock.now,
    );
    const { ProbotOctokit } = await import('probot');
    nock.disableNetConnect();
    const Client = ProbotOctokit.plugin(budgeted(book, () => new Promise<void>(() => {}))).defaults({
      retry: { enabled: false },
      throttle: { enabled: false },
    });
    const o = new Client({ auth: { token: 't', installationId: 3 } });
    nock('https://api.github.com').get('/repos/acme/api').reply(200, {});
    await o.request('GET /repos/{owner}/{repo}', { owner: 'acme', repo: 'api' });
    // The minute's one point is spent: the next request is held (by a sleep that never ends) ...
    const held = o.request('GET /repos/{owner}/{repo}', { owner: 'acme', repo: 'api' });
    await settle();
    book.stop();
    // ... until the stop refuses it; nock has no second answer, so a send would fail otherwise.
    await expect(held).rejects.toBeInstanceOf(BudgetStopped);
    await expect(o.request('GET /repos/{owner}/{repo}', { owner: 'acme', repo: 'api' })).rejects.toBeInstanceOf(
      BudgetStopped,
    );
    expect(nock.pendingMocks()).toEqual([]);
  });
});

describe('a quick, clean stop', () => {
  /** A leader with ticks on hand timers, its reads held at a gate; and a second process on the same store. */
  async function leading(lines: string[]) {
    const timers = new HandTimers();
    let leadership!: Leadership;
    const h = makeHarness({ policy: { globalCap: 20, readConcurrency: 2 }, timers, lead: () => leadership.fence() });
    leadership = new Leadership({
      leaders: h.store.leaders,
      processId: h.engine.processId,
      log: recordingLog(lines),
      policy: DEFAULT_LEADERSHIP,
    });
    const other = new Leadership({
      leaders: h.store.leaders,
      processId: 'p-other',
      log: recordingLog([]),
      policy: DEFAULT_LEADERSHIP,
    });
    for (let i = 0; i < 6; i++) {
      h.forge.addRepo(`acme/r${i}`, {});
      h.forge.addIssue(`acme/r${i}`, 1);
    }
    const held = gate();
    let reading = 0;
    const read = h.forge.readRepo.bind(h.forge);
    h.forge.readRepo = async (repo, o) => {
      reading++;
      await held.opened;
      return read(repo, o);
    };
    const ticks = new Ticks({
      engine: h.engine,
      leadership,
      timers,
      log: recordingLog(lines),
      ticking: true,
      reaperMs: h.engine.context().policy.reaperMs,
      pollWaitingRuns: false,
    });
    ticks.start();
    await until(() => leadership.isLeader, 'the lead');
    expect(await other.holds()).toBe(false);
    return { h, timers, ticks, held, other, reading: () => reading };
  }

  it('SC06 a stop during a pass, with others queued: the pass stops at its next step, the queued ones are dropped, and the lead is given up at once', async () => {
    const lines: string[] = [];
    const { h, timers, ticks, held, other, reading } = await leading(lines);
    const policy = h.engine.context().policy;
    timers.fire(policy.tickMs); // the scheduler's pass: two reads in flight, four waiting
    await settle();
    await until(() => reading() >= 2, 'two reads in flight');
    expect(reading()).toBe(2);
    timers.fire(policy.reaperMs); // queued behind it
    const kicked = h.engine.kick(); // and a kick
    const listings = h.forge.calls.listRepos;
    let stopped = false;
    const stop = ticks.stop().then(() => (stopped = true));
    await settle();
    // The two reads in flight finish (the write in flight, here a read, is not cut off) ...
    held.open();
    await stop;
    expect(stopped).toBe(true);
    // ... and nothing else: no further read, no launch, no pass after it.
    expect(reading()).toBe(2);
    expect(h.launcher.starts).toEqual([]);
    expect(await kicked).toMatchObject({ trigger: 'kick', stopped: true });
    // The queued passes never began: not even a listing.
    expect(h.forge.calls.listRepos).toBe(listings);
    expect(h.engine.lastPass).toBeNull();
    // No timer was needed: the stop did not wait out its bound.
    expect([...timers.intervals.values()].map((t) => t.ms)).toEqual([]);
    // The lead is free: the other process takes it at its next tick, with no lease to wait out.
    expect(await other.holds()).toBe(true);
    expect(lines.filter((l) => l.startsWith('warn') || l.startsWith('error'))).toEqual([]);
  });

  it('SC06 a pass that does not stop within the bound is left behind: the lead is given up anyway, and the operator told', async () => {
    const lines: string[] = [];
    const { h, timers, ticks, other, reading } = await leading(lines);
    timers.fire(h.engine.context().policy.tickMs);
    await until(() => reading() >= 2, 'two reads in flight');
    let stopped = false;
    const stop = ticks.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);
    // The reads never end; the bound's timer fires.
    expect([...timers.intervals.values()].map((t) => t.ms)).toContain(STOP_WAIT_MS);
    timers.fire(STOP_WAIT_MS);
    await stop;
    expect(await other.holds()).toBe(true);
    expect(lines.filter((l) => l.startsWith('warn'))).toEqual([
      'warn: a pass or sweep was still running when yoke stopped; the lead is given up anyway, and the next leader re-derives what it was doing',
    ]);
  });
});

describe('GitHub out of reach', () => {
  it('a pass that cannot reach GitHub at all says where it looked and what to check, once, without a stack', async () => {
    const lines: string[] = [];
    const h = makeHarness({ log: recordingLog(lines) });
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    h.forge.listInstallations = async () => {
      throw Object.assign(new Error('fetch failed'), { cause: refused });
    };
    h.fleet.kick();
    await h.engine.lock.run(async () => {});
    await settle();
    expect(lines).toEqual([
      "error: GitHub at https://github.test could not be reached (ECONNREFUSED): check this machine's network and proxy, and GHE_HOST if yoke works with GitHub Enterprise Server (unset, it is github.com). Nothing is lost: the next tick tries again.",
    ]);
    // Any other failure is said as before.
    lines.length = 0;
    h.forge.listInstallations = async () => {
      throw new Error('something else');
    };
    h.fleet.kick();
    await h.engine.lock.run(async () => {});
    await settle();
    expect(lines).toEqual(['error: kicked pass failed']);
  });
});
