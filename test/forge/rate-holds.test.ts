import nock from 'nock';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CLIENT_POLICY,
  holdUntil,
  RateHolds,
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
});
