import nock from 'nock';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CLIENT_POLICY,
  holdUntil,
  RateHolds,
  STORE_HOLD_FRESH_MS,
  yokeOctokit,
  type Octokit,
} from '../../src/forge/github/octokit.js';
import { openStore } from '../../src/store/store.js';
import { ManualClock } from '../helpers/fleet.js';
import { isolateNock } from '../helpers/nock.js';

// A secondary rate limit stops the installation, not one request: after a 403
// with retry-after, GitHub's rule is to make no request at all until then.
// yoke holds every request of that installation, in this process and, through
// the store, in every other process on it. Times are the injected clock's.

isolateNock({ unmatched: true });

const POLICY = {
  ...DEFAULT_CLIENT_POLICY,
  retry: { enabled: false, doNotRetry: [] },
  throttle: { enabled: false, maxRetries: 0, maxWaitSeconds: 0 },
};
const API = 'https://api.github.test';

describe('a rate-limit hold', () => {
  it('reads retry-after, or a spent primary limit\u2019s reset, from a refusal; nothing else holds', () => {
    const h = (status: number, headers: Record<string, string>) => holdUntil(status, new Headers(headers), 1_000);
    expect(h(403, { 'retry-after': '5' })).toBe(6_000);
    expect(h(429, { 'retry-after': '60' })).toBe(61_000);
    expect(h(403, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1800' })).toBe(1_800_000);
    expect(h(403, {})).toBeNull();
    expect(h(200, { 'retry-after': '5' })).toBeNull();
  });

  it('GH05 after a 403 with retry-after: 5 on one request, no request of that installation goes out for 5 s, in this process or another on the same store', async () => {
    const store = openStore(':memory:');
    const clock = new ManualClock(Date.UTC(2026, 11, 3, 10, 0, 0));
    const slept: number[] = [];
    const sleep = async (ms: number) => {
      slept.push(ms);
      clock.advance(ms);
    };
    const client = (holds: RateHolds) => {
      const Client = yokeOctokit(store, clock, { requests: 0, notModified: 0 }, POLICY, { holds });
      return new Client({ auth: 'ghs_token', baseUrl: API }) as unknown as Octokit;
    };
    const here = client(new RateHolds(store.rateHolds, clock.now, sleep));
    // Another yoke process: its own memory, the same store.
    const there = client(new RateHolds(store.rateHolds, clock.now, sleep));
    const start = clock.now();
    const seenAt: Record<string, number> = {};
    nock(API)
      .get('/repos/acme/api/issues')
      .reply(403, { message: 'You have exceeded a secondary rate limit.' }, { 'retry-after': '5' })
      .get('/repos/acme/api/pulls')
      .reply(function () {
        seenAt.pulls = clock.now();
        return [200, []];
      })
      .get('/repos/acme/api/labels')
      .reply(function () {
        seenAt.labels = clock.now();
        return [200, []];
      });
    await expect(
      here.request('GET /repos/{owner}/{repo}/issues', { owner: 'acme', repo: 'api' }),
    ).rejects.toMatchObject({ status: 403 });
    expect(await store.rateHolds.until('app')).toBe(start + 5_000);
    await here.request('GET /repos/{owner}/{repo}/pulls', { owner: 'acme', repo: 'api' });
    await there.request('GET /repos/{owner}/{repo}/labels', { owner: 'acme', repo: 'api' });
    expect(seenAt).toEqual({ pulls: start + 5_000, labels: start + 5_000 });
    expect(slept).toEqual([5_000]);
  });

  it('GH05 a hold another process records stops this one within STORE_HOLD_FRESH_MS; requests that start together ask the store once, and a failed read is asked again', async () => {
    const store = openStore(':memory:');
    const clock = new ManualClock(Date.UTC(2026, 11, 3, 10, 0, 0));
    let asked = 0;
    let failNext = false;
    const counted = {
      hold: (scope: string, until: number) => store.rateHolds.hold(scope, until),
      until: (scope: string) => {
        asked++;
        if (failNext) {
          failNext = false;
          return Promise.reject(new Error('the store is gone'));
        }
        return store.rateHolds.until(scope);
      },
    };
    const slept: number[] = [];
    const holds = new RateHolds(counted, clock.now, async (ms) => {
      slept.push(ms);
      clock.advance(ms);
    });
    await Promise.all([holds.wait('i1'), holds.wait('i1'), holds.wait('i1')]);
    expect(asked).toBe(1);
    // Another process is refused now, and holds the installation for a minute.
    const start = clock.now();
    await store.rateHolds.hold('i1', start + 60_000);
    clock.advance(STORE_HOLD_FRESH_MS - 1);
    await holds.wait('i1');
    expect([asked, slept]).toEqual([1, []]);
    clock.advance(1);
    await holds.wait('i1');
    expect(slept).toEqual([60_000 - STORE_HOLD_FRESH_MS]);
    expect(clock.now()).toBe(start + 60_000);
    // Its own refusal holds this process at once, whatever the store said last.
    const before = asked;
    await holds.hold('i1', clock.now() + 5_000);
    await holds.wait('i1');
    expect(slept).toEqual([60_000 - STORE_HOLD_FRESH_MS, 5_000]);
    expect(asked).toBeGreaterThan(before);
    // A read that failed is not kept.
    clock.advance(STORE_HOLD_FRESH_MS);
    failNext = true;
    await expect(holds.wait('i2')).rejects.toThrow('the store is gone');
    const failedAt = asked;
    await holds.wait('i2');
    expect(asked).toBe(failedAt + 1);
  });
});
