import { describe, expect, it } from 'vitest';
import { buildFleetReport } from '../../src/http/operator/report.js';
import { needsYou } from '../../src/http/pages/needs-you.js';
import { makeHarness } from '../helpers/fleet.js';
import { liveRun } from '../helpers/run-api.js';

// What a maintainer who keeps the dashboard open must act on, with the command for each.

describe('the dashboard\'s "Needs you"', () => {
  it('lists a paused repository, a disabled one and a failed run of the last day, each with what moves it; a healthy fleet needs nothing', async () => {
    const h = makeHarness();
    await h.store.repos.ensure('acme/api', 1, h.clock.now());
    expect(needsYou(await buildFleetReport(h.fleet, null), h.clock.now())).toEqual([]);
    for (let i = 0; i < 3; i++) await h.store.repos.addFailure('acme/api', 3, h.clock.now());
    await h.store.repos.ensure('acme/web', 1, h.clock.now());
    await h.store.repos.setDisabled(
      'acme/web',
      '.github/yoke.yml is not valid: "autolnad" is not a setting here; did you mean "autoland"?',
      h.clock.now(),
    );
    await h.store.repos.ensure('acme/ops', 1, h.clock.now());
    const fail = async (repo: string) => {
      const id = await liveRun(h, { repo, issue: 14, secret: 's' });
      await h.store.runs.recordReport(
        id,
        { outcome: 'failure', verdict: null, summary: 'Error: issue #14 names no demo task', cost: null },
        h.clock.now(),
      );
      await h.store.runs.end(id, 'failure', null, h.clock.now());
      h.clock.advance(1000);
      return id;
    };
    await fail('acme/api');
    const id = await fail('acme/api');
    const ops = await fail('acme/ops');
    expect(needsYou(await buildFleetReport(h.fleet, null), h.clock.now())).toEqual([
      {
        repo: 'acme/api',
        what: 'acme/api is paused after 3 AFK failures: no new work starts',
        command: (await buildFleetReport(h.fleet, null)).repos.find((r) => r.repo === 'acme/api')!.recovery,
      },
      {
        repo: 'acme/web',
        what: 'acme/web is disabled: .github/yoke.yml is not valid: "autolnad" is not a setting here; did you mean "autoland"?',
        command: 'Fix `.github/yoke.yml` on the default branch of acme/web; yoke re-reads it on its next pass.',
      },
      // The same work failing twice is one line, its latest run; in a paused repository the pause is lifted first.
      {
        repo: 'acme/ops',
        what: `afk_auto run ${ops} on issue#14 failed: Error: issue #14 names no demo task`,
        command: 'comment `/yoke start` on #14 to try again now',
      },
      {
        repo: 'acme/api',
        what: `afk_auto run ${id} on issue#14 failed (2 runs in the last day): Error: issue #14 names no demo task`,
        command: 'first lift what holds acme/api (above), then comment `/yoke start` on #14 to try again now',
      },
    ]);
    // A failure older than a day no longer needs anyone.
    h.clock.advance(86_400_001);
    expect(needsYou(await buildFleetReport(h.fleet, null), h.clock.now()).map((n) => n.repo)).toEqual([
      'acme/api',
      'acme/web',
    ]);
  });

  it('forgets a failure once a later run on the same issue succeeded or is under way', async () => {
    const h = makeHarness();
    await h.store.repos.ensure('acme/api', 1, h.clock.now());
    const end = async (outcome: 'failure' | 'success') => {
      const id = await liveRun(h, { repo: 'acme/api', issue: 1, secret: 's' });
      await h.store.runs.recordReport(
        id,
        { outcome, verdict: null, summary: outcome === 'failure' ? 'Error: the tests fail' : 'opened #2', cost: null },
        h.clock.now(),
      );
      await h.store.runs.end(id, outcome, null, h.clock.now());
      h.clock.advance(1000);
      return id;
    };
    await end('failure');
    const last = await end('failure');
    expect(needsYou(await buildFleetReport(h.fleet, null), h.clock.now()).map((n) => n.what)).toEqual([
      `afk_auto run ${last} on issue#1 failed (2 runs in the last day): Error: the tests fail`,
    ]);
    const retry = await liveRun(h, { repo: 'acme/api', issue: 1, secret: 's' });
    expect(needsYou(await buildFleetReport(h.fleet, null), h.clock.now())).toEqual([]);
    await h.store.runs.end(retry, 'success', null, h.clock.now());
    expect(needsYou(await buildFleetReport(h.fleet, null), h.clock.now())).toEqual([]);
  });
});
