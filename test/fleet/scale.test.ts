import nock from 'nock';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLimiter } from '../../src/kernel/limit.js';
import { gate, makeHarness, ManualClock } from '../helpers/fleet.js';

// SC01: one pass reads repositories concurrently, with a bound on what is in flight.

afterEach(() => {
  nock.cleanAll();
});

describe('concurrent, bounded reads', () => {
  it('SC01 a pass reads its repositories concurrently, never more at once than its bound', async () => {
    const h = makeHarness({ policy: { globalCap: 10, readConcurrency: 3 } });
    for (let i = 0; i < 7; i++) {
      h.forge.addRepo(`fleet/r${i}`, {});
      h.forge.addIssue(`fleet/r${i}`, 1);
    }
    const held = gate();
    let reading = 0;
    let peak = 0;
    const read = h.forge.readRepo.bind(h.forge);
    h.forge.readRepo = async (repo) => {
      reading++;
      peak = Math.max(peak, reading);
      await held.opened;
      reading--;
      return read(repo);
    };
    const pass = h.engine.schedulerTick();
    // Let every read that may start, start (the pass reads the store before it reads GitHub).
    for (let i = 0; i < 200 && reading < 3; i++) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 20));
    expect(reading).toBe(3);
    held.open();
    const report = await pass;
    expect(peak).toBe(3);
    // The decisions are the same as reading one after another: listing order, every repo.
    expect(report.candidates.map((c) => c.repo)).toEqual(Array.from({ length: 7 }, (_, i) => `fleet/r${i}`));
  });

  it('SC01 the limiter runs at most its bound at once and starts the next as one ends', async () => {
    const limiter = createLimiter(2);
    const gates = Array.from({ length: 5 }, gate);
    let running = 0;
    const done = gates.map((g) =>
      limiter.run(async () => {
        running++;
        await g.opened;
        running--;
      }),
    );
    await Promise.resolve();
    expect(running).toBe(2);
    gates[0]!.open();
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(running).toBe(2);
    gates.forEach((g) => g.open());
    await Promise.all(done);
    expect(limiter.peak).toBe(2);
  });
});

describe('poll tiers', () => {
  it('SC02 a repository is active with a live run, an open claim, an open request or a recent wake; idle otherwise', async () => {
    const { isActive, viewMaxAgeMs } = await import('../../src/fleet/activity.js');
    const policy = { idleProbeMs: 300_000, activeWindowMs: 600_000 };
    const quiet = { liveRuns: 0, openRequests: 0, openClaims: false, wokenAt: null };
    const now = 1_000_000_000;
    expect(isActive(quiet, now, policy)).toBe(false);
    expect(viewMaxAgeMs(quiet, now, policy)).toBe(300_000);
    for (const busy of [{ liveRuns: 1 }, { openRequests: 1 }, { openClaims: true }, { wokenAt: now - 599_999 }]) {
      expect(viewMaxAgeMs({ ...quiet, ...busy }, now, policy), JSON.stringify(busy)).toBe(0);
    }
    expect(isActive({ ...quiet, wokenAt: now - 600_000 }, now, policy)).toBe(false);
  });

  it('SC02 the pass probes active repositories every time and idle ones on their slower cadence; a wake makes one active at once', async () => {
    const h = makeHarness({ policy: { globalCap: 5, idleProbeMs: 300_000, activeWindowMs: 60_000 } });
    h.forge.addRepo('acme/quiet', {});
    h.forge.addRepo('acme/busy', {});
    h.forge.addIssue('acme/busy', 1);
    const asked = new Map<string, number | undefined>();
    const read = h.forge.readRepo.bind(h.forge);
    h.forge.readRepo = async (repo, opts) => {
      asked.set(repo.fullName, (opts as { maxViewAgeMs?: number } | undefined)?.maxViewAgeMs);
      return read(repo);
    };
    await h.engine.schedulerTick(); // busy launches its AFK run
    await h.engine.schedulerTick();
    expect(Object.fromEntries(asked)).toEqual({ 'acme/quiet': 300_000, 'acme/busy': 0 });
    // The wake's pass comes once the reader is asked to read the repository again (SC09).
    h.fleet.wake('acme/quiet');
    await vi.waitFor(() => expect(asked.get('acme/quiet')).toBe(0));
    h.clock.advance(60_000); // the wake has worn off
    await h.engine.schedulerTick();
    expect(asked.get('acme/quiet')).toBe(300_000);
  });
});

describe('the request budget', () => {
  it('SC03 plans per endpoint, as GitHub counts: a minute of points on each endpoint, content writes a minute and an hour, with headroom', async () => {
    const { RequestBudget, costOf } = await import('../../src/forge/github/budget.js');
    const clock = new ManualClock();
    const budget = new RequestBudget(
      { pointsPerMinutePerEndpoint: 100, contentWritesPerMinute: 10, contentWritesPerHour: 20, headroom: 0.8 },
      clock.now,
    );
    const issues = costOf('GET', 'https://api.github.com/repos/a/b/issues?state=all');
    expect(issues).toEqual({ endpoint: 'GET /repos/{owner}/{repo}/issues', points: 1, contentWrite: false });
    expect(costOf('GET', '/repos/{owner}/{repo}/issues')).toEqual({
      endpoint: 'GET /repos/{owner}/{repo}/issues',
      points: 1,
      contentWrite: false,
    });
    expect(costOf('POST', 'https://api.github.com/repos/a/b/issues/7/comments')).toEqual({
      endpoint: 'POST /repos/{owner}/{repo}/issues/{issue_number}/comments',
      points: 5,
      contentWrite: true,
    });
    expect(costOf('PUT', '/repos/a/b/pulls/7/merge')).toMatchObject({ points: 5, contentWrite: false });
    // 80 points (80% of 100) on one endpoint: the next GET there waits for the oldest to leave the minute ...
    for (let i = 0; i < 80; i++) {
      expect(budget.waitFor(issues)).toBe(0);
      budget.spend(issues);
    }
    expect(budget.endpointLeft(issues.endpoint)).toBe(0);
    expect(budget.waitFor(issues)).toBe(60_001);
    // ... and another endpoint has its own minute.
    expect(budget.waitFor(costOf('GET', '/repos/a/b/pulls'))).toBe(0);
    expect(budget.remaining()).toMatchObject({ points: 0, contentWrites: 8 });
    clock.advance(60_001);
    expect(budget.remaining().points).toBe(80);
    // Content writes: 8 a minute (80% of 10), 16 an hour (80% of 20), whichever endpoint creates them.
    const comment = costOf('POST', '/repos/a/b/issues/7/comments');
    const issue = costOf('POST', '/repos/a/b/issues');
    for (let i = 0; i < 8; i++) {
      expect(budget.waitFor(i % 2 ? comment : issue)).toBe(0);
      budget.spend(i % 2 ? comment : issue);
      clock.advance(1_000);
    }
    expect(budget.remaining().contentWrites).toBe(0);
    expect(budget.waitFor(comment)).toBe(60_000 - 8_000 + 1);
    clock.advance(60_000);
    for (let i = 0; i < 8; i++) budget.spend(comment);
    // The minute has room again, the hour none: the next write waits for the hour's first to leave it.
    clock.advance(60_001);
    expect(budget.remaining().contentWrites).toBe(0);
    expect(budget.waitFor(comment)).toBe(3_600_000 - (8_000 + 60_000 + 60_001) + 1);
  });

  it('SC03 a request costing more than a whole limit waits for an empty window, never forever', async () => {
    const { RequestBudget, costOf } = await import('../../src/forge/github/budget.js');
    const clock = new ManualClock();
    // 4 points a minute (80% of 5) on each endpoint: a 5-point write is more than the whole minute holds.
    const budget = new RequestBudget(
      { pointsPerMinutePerEndpoint: 5, contentWritesPerMinute: 10, contentWritesPerHour: 10, headroom: 0.8 },
      clock.now,
    );
    const merge = costOf('PUT', '/repos/a/b/pulls/7/merge');
    expect(budget.waitFor(merge)).toBe(0);
    budget.spend(merge);
    clock.advance(10_000);
    expect(budget.waitFor(merge)).toBe(50_001);
    clock.advance(50_001);
    expect(budget.waitFor(merge)).toBe(0);
  });

  it("SC03 the primary limit is what the installation's answers say; a 304 costs none of it, and a short one holds requests until its reset", async () => {
    const { RequestBudget, costOf } = await import('../../src/forge/github/budget.js');
    const clock = new ManualClock();
    const budget = new RequestBudget(
      { pointsPerMinutePerEndpoint: 900, contentWritesPerMinute: 80, contentWritesPerHour: 500, headroom: 0.8 },
      clock.now,
    );
    const get = costOf('GET', '/repos/a/b');
    expect(budget.remaining().primary).toBe(Number.POSITIVE_INFINITY);
    const reset = Math.floor(clock.now() / 1000) + 600;
    const headers = (remaining: number) => ({
      'x-ratelimit-limit': '5000',
      'x-ratelimit-remaining': String(remaining),
      'x-ratelimit-reset': String(reset),
      'x-ratelimit-resource': 'core',
    });
    budget.answered(200, headers(1100));
    // A fifth of 5,000 is left alone: 100 above it.
    expect(budget.remaining().primary).toBe(100);
    // A 304 says what is left, unchanged; an answer without headers takes one off unless it is a 304.
    budget.answered(304, {});
    expect(budget.remaining().primary).toBe(100);
    budget.answered(200, {});
    expect(budget.remaining().primary).toBe(99);
    // Another resource's limit (search, say) is not the core one.
    budget.answered(200, { ...headers(0), 'x-ratelimit-resource': 'search' });
    expect(budget.remaining().primary).toBe(99);
    expect(budget.waitFor(get)).toBe(0);
    budget.answered(200, headers(1000));
    expect(budget.remaining()).toMatchObject({ primary: 0, points: 0 });
    expect(budget.waitFor(get)).toBe(reset * 1000 - clock.now() + 1);
    clock.advance(600_000);
    expect(budget.waitFor(get)).toBe(0);
  });

  it('SC03 when the budget is short a pass reads lander and merge work first and defers the rest, saying why', async () => {
    const { addClaimPull, AUTOLAND } = await import('../helpers/fleet.js');
    const { buildFleetReport, formatFleetReport } = await import('../../src/http/operator/report.js');
    const h = makeHarness({ policy: { globalCap: 5 } });
    h.forge.addRepo('acme/claims', AUTOLAND);
    h.forge.addRepo('acme/backlog', {}, 2);
    h.forge.addIssue('acme/backlog', 1);
    await addClaimPull(h, 'acme/claims', { number: 7, issue: 1, headSha: 'aaaaaaa' });
    await h.engine.schedulerTick(); // both read; the claim's lander launches
    h.forge.points.set(2, 1); // installation 2 has 1 point left this minute
    const reads = () => [h.forge.readsByRepo.get('acme/claims'), h.forge.readsByRepo.get('acme/backlog')];
    const [claimsBefore, backlogBefore] = reads();
    const pass = await h.engine.schedulerTick();
    expect(reads()).toEqual([claimsBefore! + 1, backlogBefore]); // the claim's repository was read; the backlog's was not
    expect(pass.deferred).toEqual([{ repo: 'acme/backlog', installationId: 2, points: 1 }]);
    const report = await buildFleetReport(h.fleet, pass);
    expect(report.lastPass!.deferred[0]).toMatchObject({ repo: 'acme/backlog', code: 'request_budget' });
    expect(formatFleetReport(report)).toContain(
      "~ acme/backlog (all its work): request_budget: acme/backlog was not read this pass: installation 2 has 1 point left of this minute's request budget on its busiest GitHub endpoint, and work further down the pipeline went first.",
    );
    h.forge.points.delete(2);
    const later = await h.engine.schedulerTick();
    expect(later.deferred).toEqual([]);
    expect(reads()[1]).toBe(backlogBefore! + 1);
  });

  it('SC03 a repository never read is read before the probes that came due: a fleet larger than a minute’s budget finishes its first read', async () => {
    const { READ_ESTIMATE_POINTS } = await import('../../src/fleet/spawn/pass-deps.js');
    const h = makeHarness({ policy: { globalCap: 5, readConcurrency: 1 } });
    // Nothing to launch in them (a live run would make its repository lander and merge work, read first).
    for (let i = 0; i < 4; i++) h.forge.addRepo(`acme/r${i}`, {}, 2);
    // Each read spends what a read is reckoned to cost; the installation's minute covers two.
    const read = h.forge.readRepo.bind(h.forge);
    h.forge.readRepo = async (repo, o) => {
      h.forge.points.set(2, h.forge.points.get(2)! - READ_ESTIMATE_POINTS);
      return read(repo, o);
    };
    h.forge.points.set(2, 2 * READ_ESTIMATE_POINTS);
    const first = await h.engine.schedulerTick();
    expect(first.deferred.map((d) => d.repo)).toEqual(['acme/r2', 'acme/r3']);
    // The next minute's room is the same two reads, and r0 and r1 came due for their probes (the fake keeps no
    // view: each of its reads is due): the two never read go first.
    h.forge.points.set(2, 2 * READ_ESTIMATE_POINTS);
    const second = await h.engine.schedulerTick();
    expect(second.deferred.map((d) => d.repo)).toEqual(['acme/r0', 'acme/r1']);
    expect([0, 1, 2, 3].map((i) => h.forge.readsByRepo.get(`acme/r${i}`))).toEqual([1, 1, 1, 1]);
    // Once every one was read, the listing's order again.
    h.forge.points.set(2, 2 * READ_ESTIMATE_POINTS);
    const third = await h.engine.schedulerTick();
    expect(third.deferred.map((d) => d.repo)).toEqual(['acme/r2', 'acme/r3']);
  });
});

describe('the budgeted GitHub client', () => {
  it('SC03 holds a request that would overspend the installation’s minute for as long as the plan says, then sends it', async () => {
    const { BudgetBook } = await import('../../src/forge/github/budget.js');
    const { budgeted } = await import('../../src/forge/github/octokit.js');
    const { ProbotOctokit } = await import('probot');
    nock.disableNetConnect();
    const clock = new ManualClock();
    const book = new BudgetBook(
      { pointsPerMinutePerEndpoint: 3, contentWritesPerMinute: 1, contentWritesPerHour: 1, headroom: 1 },
      clock.now,
    );
    const waits: number[] = [];
    const sleep = async (ms: number) => {
      waits.push(ms);
      clock.advance(ms);
    };
    const Client = ProbotOctokit.plugin(budgeted(book, sleep)).defaults({
      retry: { enabled: false },
      throttle: { enabled: false },
    });
    const o = new Client({ auth: { token: 't' } });
    nock('https://api.github.com').get('/repos/acme/api').times(4).reply(200, {});
    for (let i = 0; i < 3; i++) {
      await o.request('GET /repos/{owner}/{repo}', { owner: 'acme', repo: 'api' });
      clock.advance(10_000);
    }
    expect(waits).toEqual([]);
    await o.request('GET /repos/{owner}/{repo}', { owner: 'acme', repo: 'api' });
    // The first GET leaves the minute 60 s after it was sent, 30 s from now.
    expect(waits).toEqual([30_001]);
    expect(nock.pendingMocks()).toEqual([]);
  });
});

describe('poll tiers and run ends', () => {
  it('SC02 a repository whose run just ended is probed in the pass that reaps it, even without a webhook', async () => {
    const h = makeHarness({ policy: { globalCap: 1, idleProbeMs: 300_000, activeWindowMs: 60_000 } });
    h.forge.addRepo('acme/api', {});
    h.forge.addIssue('acme/api', 1);
    const asked: (number | undefined)[] = [];
    const read = h.forge.readRepo.bind(h.forge);
    h.forge.readRepo = async (repo, opts) => {
      asked.push((opts as { maxViewAgeMs?: number } | undefined)?.maxViewAgeMs);
      return read(repo);
    };
    await h.engine.schedulerTick();
    const run = h.launcher.starts[0]!;
    h.clock.advance(120_000);
    h.launcher.finish(run.runId);
    asked.length = 0;
    await h.engine.reaperTick();
    expect(asked).toEqual([0]);
  });
});
