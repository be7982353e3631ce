import { describe, expect, it } from 'vitest';
import { buildFleetReport, formatFleetReport } from '../../src/http/report.js';
import { reportRunResult } from '../../src/http/run-report.js';
import { AUTOLAND, ManualClock, addClaimPull, makeHarness, report, type Harness } from '../helpers/fleet.js';

// Spend: runs report what they cost with their result; a repository's
// `budget.daily_usd` (or the operator's YOKE_DAILY_USD) stops new AFK work for
// the rest of the UTC day, never landers or fixes, and moves no strike.

const noAuth = { oidc: null, audience: 'http://yoke.test', reach: 'api' as const };

/** A run reports success and its cost, with its own secret, as an agent would. */
async function reportCost(h: Harness, runId: string, usd: number) {
  const spec = h.launcher.starts.find((s) => s.runId === runId)!;
  const answer = await reportRunResult(h.fleet, noAuth, {
    runId,
    bearer: spec.secret,
    body: { outcome: 'success', summary: 'done', cost: { usd, input_tokens: 1000, output_tokens: 200 } },
  });
  expect(answer.ok).toBe(true);
  h.launcher.finish(runId);
}

const afkStarts = (h: Harness) => h.launcher.starts.filter((s) => s.kind === 'afk_auto').map((s) => s.subject);

describe('spend', () => {
  it('budget_spent: once the day’s spend crosses daily_usd no new AFK run starts, landers still do, and the next day work resumes', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 30, 9, 0, 0));
    const h = makeHarness({ clock, policy: { globalCap: 2 } });
    h.forge.addRepo('acme/api', { ...AUTOLAND, budget: { daily_usd: 5 } });
    h.forge.addIssue('acme/api', 1);
    h.forge.addIssue('acme/api', 2);
    await h.engine.schedulerTick();
    expect(afkStarts(h)).toEqual(['issue#1', 'issue#2']);

    // Mid-day the two runs report $3.10 and $2.40: $5.50 of a $5 budget.
    clock.advance(3 * 3_600_000);
    const [one, two] = h.launcher.starts;
    await reportCost(h, one!.runId, 3.1);
    await reportCost(h, two!.runId, 2.4);
    await h.engine.reaperTick();
    h.forge.addIssue('acme/api', 3);
    await addClaimPull(h, 'acme/api', { number: 10, issue: 1, headSha: 'aaaaaaa1' });
    const pass = await h.engine.schedulerTick();
    // The lander starts; issue 3 waits, and says why.
    expect(h.launcher.starts.filter((s) => s.kind === 'lander').map((s) => s.subject)).toEqual(['pr#10']);
    expect(afkStarts(h)).toEqual(['issue#1', 'issue#2']);
    const waits = pass.waiting.filter((w) => w.subject === 'issue#3');
    expect(waits.map((w) => w.reason.code)).toEqual(['budget_spent']);
    expect(waits[0]!.reason.message).toBe(
      'New AFK work and fixes people asked for in acme/api wait until 00:00 UTC: it spent $5.50 of its $5.00 daily budget today. Landers and fixes of rejected heads still run.',
    );
    // No strike: spending is not failing.
    expect((await h.store.repos.get('acme/api'))!.consecutiveFailures).toBe(0);
    const fleetReport = await buildFleetReport(h.fleet, pass);
    expect(fleetReport.spend).toEqual([
      { repo: 'acme/api', day: '2026-11-30', usd: 5.5, inputTokens: 2000, outputTokens: 400, runs: 2 },
    ]);
    expect(formatFleetReport(fleetReport)).toContain(
      '$ 2026-11-30 acme/api: $5.50 over 2 run(s), 2000 input and 400 output tokens',
    );
    expect(formatFleetReport(fleetReport)).toContain('~ acme/api issue#3 (new_work): budget_spent:');

    // The lander's verdict comment on the claim PR says what issue #1 has cost.
    const lander = h.launcher.starts.find((s) => s.kind === 'lander')!;
    await report(h, lander.runId, 'success', 'accept');
    await h.engine.reaperTick();
    expect(h.forge.comments.find((c) => c.number === 10)!.body).toMatch(
      /\n\n_Spend on #1 so far: \$3\.10 over 1 run \(1000 input and 200 output tokens\)\._$/,
    );

    // Still the same day at 23:59: still waiting.
    clock.t = Date.UTC(2026, 10, 30, 23, 59, 0);
    await h.engine.schedulerTick();
    expect(afkStarts(h)).toEqual(['issue#1', 'issue#2']);
    // The next day it starts.
    clock.t = Date.UTC(2026, 11, 1, 0, 0, 30);
    await h.engine.schedulerTick();
    expect(afkStarts(h)).toEqual(['issue#1', 'issue#2', 'issue#3']);
  });

  it('budget_spent: the operator’s fleet-wide limit stops new work in every repository, with the fleet named as the spender', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 30, 9, 0, 0));
    const h = makeHarness({ clock, policy: { globalCap: 2, dailyUsd: 1 } });
    h.forge.addRepo('acme/api', {});
    h.forge.addRepo('acme/web', {});
    h.forge.addIssue('acme/api', 1);
    await h.engine.schedulerTick();
    await reportCost(h, h.launcher.starts[0]!.runId, 1.25);
    await h.engine.reaperTick();
    h.forge.addIssue('acme/web', 7);
    const pass = await h.engine.schedulerTick();
    expect(afkStarts(h)).toEqual(['issue#1']);
    const wait = pass.waiting.find((w) => w.repo === 'acme/web')!;
    expect(wait.reason.message).toBe(
      'New AFK work and fixes people asked for in acme/web wait until 00:00 UTC: the fleet spent $1.25 of its $1.00 daily budget today. Landers and fixes of rejected heads still run.',
    );
    expect(wait.reason.recovery).toContain('YOKE_DAILY_USD');
  });

  it('a cost that is not a cost is refused with the field named, and nothing is recorded', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', {});
    h.forge.addIssue('acme/api', 1);
    await h.engine.schedulerTick();
    const spec = h.launcher.starts[0]!;
    const answer = await reportRunResult(h.fleet, noAuth, {
      runId: spec.runId,
      bearer: spec.secret,
      body: { outcome: 'success', cost: { usd: -1, input_tokens: 1, output_tokens: 1 } },
    });
    expect(answer.ok).toBe(false);
    if (!answer.ok) expect(answer.refusal.message).toContain('cost.usd');
    expect((await h.store.runs.get(spec.runId))!.reportedOutcome).toBeNull();
  });
});
