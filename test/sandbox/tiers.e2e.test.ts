import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_REPO, DEMO_TASKS, issueBody } from '../../sandbox/demo-repo.js';
import { Sandbox } from '../../sandbox/sandbox.js';
import { unclaimedWarnings } from '../helpers/sandbox-log.js';

/** Warnings the tests below provoke, each asserted where it is. */
const CLAIMED_WARNINGS: string[] = [];

// SC02 end to end: an idle repository costs no requests between its probes,
// and a webhook still starts its work within one pass.

let s: Sandbox;

beforeAll(async () => {
  s = new Sandbox({
    launcher: 'actions',
    failAgent: 0,
    issues: 1,
    tickSeconds: 1,
    env: { YOKE_IDLE_PROBE_SECONDS: '600', YOKE_ACTIVE_SECONDS: '1' },
  });
  await s.start();
  await s.waitUntil(() => s.done(), 60_000, 'the first issue to merge');
}, 90_000);

afterAll(async () => {
  await s?.stop();
});

describe('poll tiers, end to end', () => {
  it('SC02 an idle repository is not probed between its probes, and a webhook starts its new work within one pass', async () => {
    // Idle: nothing live, no claim open, the last wake more than a second ago.
    await s.waitUntil(async () => (await s.runtime.store.runs.listLive()).length === 0, 20_000, 'the runs to end');
    await new Promise((r) => setTimeout(r, 1500));
    s.forge.http.resetStats();
    await new Promise((r) => setTimeout(r, 2500)); // two scheduler ticks
    expect(s.forge.http.stats.log.filter((l) => l.path.includes(`/repos/${DEMO_REPO}/`))).toEqual([]);

    // A maintainer opens an issue and labels it: the labeled webhook wakes the repository.
    const task = DEMO_TASKS[1]!;
    const call = (method: string, path: string, body: unknown) =>
      fetch(`${s.forge.url}/api/v3/repos/${DEMO_REPO}${path}`, {
        method,
        headers: { authorization: `token ${s.maintainerToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const issue = (await (await call('POST', '/issues', { title: task.title, body: issueBody(task) })).json()) as {
      number: number;
    };
    const labelledAt = Date.now();
    await call('POST', `/issues/${issue.number}/labels`, { labels: ['yoke:afk'] });
    // Within the pass the webhook asks for, not at the idle probe ten minutes later.
    await s.waitUntil(
      async () => (await s.runs()).some((r) => r.issueNumber === issue.number),
      10_000,
      'the new issue’s AFK run',
    );
    const run = (await s.runs()).find((r) => r.issueNumber === issue.number)!;
    expect(run.launchedAt - labelledAt).toBeLessThan(10_000);
  }, 30_000);
});

describe('what yoke logged here', () => {
  it('holds no warning or error that no test here claimed', () => {
    expect(unclaimedWarnings(s, CLAIMED_WARNINGS)).toEqual([]);
  });
});
