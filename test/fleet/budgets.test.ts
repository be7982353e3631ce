import { describe, expect, it } from 'vitest';
import { buildFleetReport, formatFleetReport } from '../../src/http/operator/report.js';
import { reportRunResult } from '../../src/http/api/run-report.js';
import { fixWaitsForMoneyNotice } from '../../src/fleet/notices/messages.js';
import {
  AUTOLAND,
  ManualClock,
  addClaimPull,
  makeHarness,
  rejectedClaim,
  report,
  type Harness,
} from '../helpers/fleet.js';

// Money (BU01-BU04): the pass spends the budgets down as it spends the cap, in stage order. Each launch of a
// run that calls the model reserves its whole limit; a run costs the budgets what it reported, or what it
// reserved until it reports. Landers call no model and reserve nothing. What waits for money says which
// budget, what it holds, and when it starts again.

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
const MORNING = Date.UTC(2026, 10, 30, 9, 0, 0);
/** Autoland with fixes, a $3 day and $2 runs: room for one run once $1 is spent. */
const FINISHING = {
  ...AUTOLAND,
  fix_forward: { enabled: true, max_attempts: 2 },
  budget: { daily_usd: 3 },
  agent: { max_usd: 2 },
};

describe('budgets spent down by the pass (BU01, BU02)', () => {
  it('BU01 BU02 three runs at once under a $5 budget: only what fits launches, each reserving its whole limit and held to it; what finishes under its limit gives the rest back', async () => {
    const clock = new ManualClock(MORNING);
    const h = makeHarness({ clock, policy: { globalCap: 3 } });
    h.forge.addRepo('acme/api', { auto: true, budget: { daily_usd: 5 }, agent: { max_usd: 2 } });
    for (const n of [1, 2, 3]) h.forge.addIssue('acme/api', n);
    const pass = await h.engine.schedulerTick();
    // Two runs of $2 fit in $5; the third would make $6.
    expect(afkStarts(h)).toEqual(['issue#1', 'issue#2']);
    expect(h.launcher.starts.map((s) => s.limits.maxUsd)).toEqual([2, 2]);
    expect((await h.store.runs.listLive()).map((r) => r.reservedUsd)).toEqual([2, 2]);
    const wait = pass.waiting.find((w) => w.subject === 'issue#3')!;
    expect(wait.reason).toEqual({
      code: 'budget_reserved',
      status: 429,
      message:
        "Waits for money: acme/api's daily budget holds $4.00 of its $5.00 (what runs reported they spent, and the reservations of runs that have not reported), and this run would reserve $2.00, its whole limit.",
      recovery:
        'Nothing to do: it starts when one of the 2 live runs holding a reservation in it ends under its limit and gives the rest back, or when the budget starts again at 2026-12-01T00:00:00Z. To allow more, raise budget.daily_usd in .github/yoke.yml of acme/api; to let more runs share it, lower agent.max_usd.',
    });
    // `yoke plan` says the same, changing nothing.
    const plan = await h.engine.nextPass('acme/api');
    expect(plan.ok && plan.value.waiting.map((w) => [w.subject, w.code])).toEqual([['issue#3', 'budget_reserved']]);
    // The first run spent $0.40 of its $2: $2.40 held, and the third fits.
    await reportCost(h, h.launcher.starts[0]!.runId, 0.4);
    await h.engine.reaperTick();
    await h.engine.schedulerTick();
    expect(afkStarts(h)).toEqual(['issue#1', 'issue#2', 'issue#3']);
    // BU06: the dashboard issue says what the issue cost this week.
    const body = [...h.forge.issueUpdates].reverse().find((u) => u.change.body)?.change.body ?? '';
    expect(body).toContain(
      'What each issue cost this week (its AFK runs, landers and fixes, as they reported):\n- [#1](https://github.test/acme/api/issues/1): $0.40 over 1 run(s)',
    );
    // No strike: waiting for money is not failing.
    expect((await h.store.repos.get('acme/api'))!.consecutiveFailures).toBe(0);
  });

  it('BU01 the black-box case of the issue: daily_usd 5, max_usd 5, a cap of 3: one run at a time, never $15', async () => {
    const clock = new ManualClock(MORNING);
    const h = makeHarness({ clock, policy: { globalCap: 3 } });
    h.forge.addRepo('acme/api', { auto: true, budget: { daily_usd: 5 }, agent: { max_usd: 5 } });
    for (const n of [1, 2, 3]) h.forge.addIssue('acme/api', n);
    await h.engine.schedulerTick();
    expect(afkStarts(h)).toEqual(['issue#1']);
    // It spends all it was allowed: the day is spent, and nothing more starts today.
    await reportCost(h, h.launcher.starts[0]!.runId, 5);
    await h.engine.reaperTick();
    await h.engine.schedulerTick();
    expect(afkStarts(h)).toEqual(['issue#1']);
    // Tomorrow the budget starts again.
    clock.t = Date.UTC(2026, 11, 1, 0, 0, 30);
    await h.engine.schedulerTick();
    expect(afkStarts(h)).toEqual(['issue#1', 'issue#2']);
  });

  it('BU02 a run whose launch failed, or that was reaped as never started, gives its reservation back', async () => {
    const clock = new ManualClock(MORNING);
    const h = makeHarness({ clock, policy: { globalCap: 3 } });
    h.forge.addRepo('acme/api', { auto: true, budget: { daily_usd: 4 }, agent: { max_usd: 4 } });
    h.forge.addIssue('acme/api', 1);
    h.launcher.failNext = 1;
    await h.engine.schedulerTick();
    const failed = (await h.store.runs.listForRepo('acme/api'))[0]!;
    expect([failed.outcome, failed.reservedUsd]).toEqual(['cancelled', 0]);
    await h.engine.schedulerTick();
    expect(afkStarts(h)).toEqual(['issue#1']);
    // A crash between the reservation and the start: the run is recorded, its process never runs.
    const live = (await h.store.runs.listLive())[0]!;
    h.launcher.table.running.delete(live.id);
    clock.advance(10 * 60_000);
    await h.engine.reaperTick();
    expect((await h.store.runs.get(live.id))!.reservedUsd).toBe(0);
  });
});

describe('every kind of run counts, finishing first (BU03)', () => {
  it('BU03 a lander calls no model: it reserves nothing and never waits for money; a fix reserves its limit and waits with its budget named, on the dashboards and once a day on its PR', async () => {
    const clock = new ManualClock(MORNING);
    const h = makeHarness({ clock, policy: { globalCap: 3 } });
    h.forge.addRepo('acme/api', FINISHING);
    h.forge.addIssue('acme/api', 1);
    await h.engine.schedulerTick();
    await reportCost(h, h.launcher.starts[0]!.runId, 1.5);
    await h.engine.reaperTick();
    await rejectedClaim(h, 'acme/api', { number: 10, issue: 1 });
    // $1.50 spent; the fix would reserve $2 of $3: it waits, saying so, until the budget starts again.
    const pass = await h.engine.schedulerTick();
    expect(h.launcher.starts.filter((s) => s.kind === 'fix')).toEqual([]);
    const wait = pass.waiting.find((w) => w.stage === 'fix')!;
    expect([wait.subject, wait.reason.code, wait.reason.message]).toEqual([
      'pr#10',
      'budget_reserved',
      "Waits for money: acme/api's daily budget holds $1.50 of its $3.00 (what runs reported they spent, and the reservations of runs that have not reported), and this run would reserve $2.00, its whole limit.",
    ]);
    // The PR says so too, once that day, whatever the passes.
    await h.engine.schedulerTick();
    const told = h.forge.comments.filter((c) => c.number === 10 && c.body.startsWith('The fix of #10'));
    expect(told.map((c) => c.body)).toEqual([fixWaitsForMoneyNotice(10, wait.reason)]);
    expect(told[0]!.body).toBe(
      "The fix of #10 waits for money. Waits for money: acme/api's daily budget holds $1.50 of its $3.00 (what runs reported they spent, and the reservations of runs that have not reported), and this run would reserve $2.00, its whole limit.\n\n**To recover:** Nothing to do: it starts when the budget starts again at 2026-12-01T00:00:00Z. To allow more, raise budget.daily_usd in .github/yoke.yml of acme/api; to let more runs share it, lower agent.max_usd.",
    );
    clock.t = Date.UTC(2026, 11, 1, 0, 1, 0);
    await h.engine.schedulerTick();
    expect(h.launcher.starts.filter((s) => s.kind === 'fix').map((s) => [s.subject, s.limits.maxUsd])).toEqual([
      ['pr#10', 2],
    ]);
  });

  it('BU03 money goes to finishing first: with room for one run, the fix of a rejected PR takes it and new work waits', async () => {
    const clock = new ManualClock(MORNING);
    const h = makeHarness({ clock, policy: { globalCap: 3 } });
    h.forge.addRepo('acme/api', FINISHING);
    await addClaimPull(h, 'acme/api', { number: 10, issue: 1, headSha: 'a'.repeat(40) });
    await h.engine.schedulerTick();
    await report(h, h.launcher.starts[0]!.runId, 'success', 'reject');
    await h.engine.reaperTick();
    h.forge.addIssue('acme/api', 2);
    const pass = await h.engine.schedulerTick();
    expect(h.launcher.starts.slice(1).map((s) => s.subject)).toEqual(['pr#10']);
    expect(pass.waiting.find((w) => w.subject === 'issue#2')!.reason.code).toBe('budget_reserved');
  });

  it('BU01 new work takes only its share of a budget, so finishing always has room', async () => {
    const clock = new ManualClock(MORNING);
    const h = makeHarness({ clock, policy: { globalCap: 4 } });
    h.forge.addRepo('acme/api', {
      ...AUTOLAND,
      fix_forward: { enabled: true, max_attempts: 2 },
      budget: { daily_usd: 10, new_work_share: 0.5 },
      agent: { max_usd: 3 },
    });
    for (const n of [1, 2]) h.forge.addIssue('acme/api', n);
    const pass = await h.engine.schedulerTick();
    // New work may hold $5 of the $10: one run of $3.
    expect(afkStarts(h)).toEqual(['issue#1']);
    expect(pass.waiting.find((w) => w.subject === 'issue#2')!.reason.message).toBe(
      "Waits for money: acme/api's daily budget for new work holds $3.00 of its $5.00 (what runs reported they spent, and the reservations of runs that have not reported), and this run would reserve $3.00, its whole limit.",
    );
    // A fix still fits in the rest.
    await addClaimPull(h, 'acme/api', { number: 10, issue: 3, headSha: 'a'.repeat(40) });
    await h.engine.schedulerTick();
    await report(h, h.launcher.starts.at(-1)!.runId, 'success', 'reject');
    await h.engine.reaperTick();
    await h.engine.schedulerTick();
    expect(h.launcher.starts.filter((s) => s.kind === 'fix').map((s) => s.subject)).toEqual(['pr#10']);
  });
});

describe("the fleet's budgets and the month (BU01)", () => {
  it('BU01 BU06 the operator’s daily budget holds every repository, and the wait names the fleet and YOKE_DAILY_USD; the report shows the budget and what the issue cost', async () => {
    const clock = new ManualClock(MORNING);
    const h = makeHarness({ clock, policy: { globalCap: 2, dailyUsd: 1 } });
    h.forge.addRepo('acme/api', { auto: true });
    h.forge.addRepo('acme/web', { auto: true });
    h.forge.addIssue('acme/api', 1);
    await h.engine.schedulerTick();
    // No agent.max_usd: where a budget applies a run reserves $5, or the smallest budget if less: $1 here.
    expect(h.launcher.starts.map((s) => s.limits.maxUsd)).toEqual([1]);
    await reportCost(h, h.launcher.starts[0]!.runId, 1.25);
    await h.engine.reaperTick();
    h.forge.addIssue('acme/web', 7);
    const pass = await h.engine.schedulerTick();
    expect(afkStarts(h)).toEqual(['issue#1']);
    const wait = pass.waiting.find((w) => w.repo === 'acme/web')!;
    expect(wait.reason.message).toBe(
      "Waits for money: the fleet's daily budget holds $1.25 of its $1.00 (what runs reported they spent, and the reservations of runs that have not reported), and this run would reserve $1.00, its whole limit.",
    );
    expect(wait.reason.recovery).toContain('To allow more, raise YOKE_DAILY_USD;');
    const fleetReport = await buildFleetReport(h.fleet, pass);
    expect(formatFleetReport(fleetReport)).toContain('~ acme/web issue#7 (new_work): budget_reserved:');
    expect(fleetReport.spend).toEqual([
      { repo: 'acme/api', day: '2026-11-30', usd: 1.25, inputTokens: 1000, outputTokens: 200, runs: 1 },
    ]);
    // BU06: the budget's standing and what each issue cost, in the report (the API's and the CLI's).
    expect(fleetReport.budgets).toEqual([
      {
        repo: null,
        period: 'day',
        limitUsd: 1,
        heldUsd: 1.25,
        until: '2026-12-01T00:00:00Z',
        runway: 'spent: nothing more launches until 2026-12-01T00:00:00Z',
      },
    ]);
    expect(fleetReport.issueSpend).toEqual([
      {
        repo: 'acme/api',
        issue: 1,
        usd: 1.25,
        inputTokens: 1000,
        outputTokens: 200,
        runs: 1,
        byKind: { afk: 1.25, lander: 0, fix: 0 },
      },
    ]);
    expect(formatFleetReport(fleetReport)).toContain(
      'cost of acme/api#1 this week: $1.25 over 1 run(s) (AFK $1.25, fixes $0.00, landers $0.00), 1000 input and 200 output tokens',
    );
  });

  it('BU01 a monthly budget counts every day of its month, and starts again on the first', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 3, 9));
    const h = makeHarness({ clock, policy: { globalCap: 2 } });
    h.forge.addRepo('acme/api', { auto: true, budget: { monthly_usd: 6 }, agent: { max_usd: 4 } });
    for (const n of [1, 2]) h.forge.addIssue('acme/api', n);
    await h.engine.schedulerTick();
    await reportCost(h, h.launcher.starts[0]!.runId, 3);
    await h.engine.reaperTick();
    clock.t = Date.UTC(2026, 10, 20, 9);
    const pass = await h.engine.schedulerTick();
    expect(afkStarts(h)).toEqual(['issue#1']);
    expect(pass.waiting[0]!.reason.recovery).toContain('when the budget starts again at 2026-12-01T00:00:00Z');
    clock.t = Date.UTC(2026, 11, 1, 0, 0, 1);
    await h.engine.schedulerTick();
    expect(afkStarts(h)).toEqual(['issue#1', 'issue#2']);
  });
});

describe('a cost past the limit (BU04)', () => {
  it('BU04 is recorded as reported and counts in full: new work stops', async () => {
    const clock = new ManualClock(MORNING);
    const h = makeHarness({ clock, policy: { globalCap: 2 } });
    h.forge.addRepo('acme/api', { auto: true, budget: { daily_usd: 6 }, agent: { max_usd: 2 } });
    for (const n of [1, 2, 3, 4]) h.forge.addIssue('acme/api', n);
    await h.engine.schedulerTick();
    expect(afkStarts(h)).toEqual(['issue#1', 'issue#2']);
    await reportCost(h, h.launcher.starts[0]!.runId, 4.5);
    await h.engine.reaperTick();
    expect((await h.store.runs.get(h.launcher.starts[0]!.runId))!.cost!.usd).toBe(4.5);
    // $4.50 reported and $2 still reserved: $6.50 of $6, and nothing else starts.
    await h.engine.schedulerTick();
    expect(afkStarts(h)).toEqual(['issue#1', 'issue#2']);
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
