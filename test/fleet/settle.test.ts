import { describe, expect, it } from 'vitest';
import { reportRunResult } from '../../src/http/api/run-report.js';
import { settleRun } from '../../src/fleet/money/settle.js';
import { buildFleetReport, formatFleetReport } from '../../src/http/operator/report.js';
import { renderUnsettled } from '../../src/http/pages/dashboard-spend.js';
import { ManualClock, makeHarness, type Harness } from '../helpers/fleet.js';

// BU02: what a budget holds is what was spent. A run that reports is charged what it reported, its reservation
// given back at once; a run that ends with no report keeps its reservation, unsettled, named by the wait that
// it causes, until it reports late or an operator settles it.

const noAuth = { oidc: null, audience: 'http://yoke.test', reach: 'api' as const };
const MORNING = Date.UTC(2026, 10, 30, 9, 0, 0);
const afkStarts = (h: Harness) => h.launcher.starts.filter((s) => s.kind === 'afk_auto').map((s) => s.subject);

/** A run's own report, with its own secret, as the deliver job sends it. */
function reportAs(h: Harness, runId: string, body: object) {
  const spec = h.launcher.starts.find((s) => s.runId === runId)!;
  return reportRunResult(h.fleet, noAuth, { runId, bearer: spec.secret, body });
}

/** A $5 day, $5 runs, a cap of 3: one run at a time, and a second issue waiting. */
async function oneAtATime(): Promise<{ h: Harness; first: string }> {
  const h = makeHarness({ clock: new ManualClock(MORNING), policy: { globalCap: 3 } });
  h.forge.addRepo('acme/api', { auto: true, budget: { daily_usd: 5 }, agent: { max_usd: 5 } });
  for (const n of [1, 2]) h.forge.addIssue('acme/api', n);
  await h.engine.schedulerTick();
  expect(afkStarts(h)).toEqual(['issue#1']);
  return { h, first: h.launcher.starts[0]!.runId };
}

describe('BU02 what a budget holds is what was spent', () => {
  it('BU02 a run that failed at once reports that it spent nothing, and its whole reservation goes back: the next issue starts on the next pass', async () => {
    const { h, first } = await oneAtATime();
    const answer = await reportAs(h, first, {
      outcome: 'failure',
      summary: 'The agent could not start.',
      cost: { usd: 0, input_tokens: 0, output_tokens: 0 },
    });
    expect(answer.ok).toBe(true);
    h.launcher.finish(first);
    // The reaper's pass retries #1 at once: the $5 day holds nothing for the run that failed, only the new run's $5.
    await h.engine.reaperTick();
    expect(afkStarts(h)).toEqual(['issue#1', 'issue#1']);
    expect(await h.store.spend.charged({ repo: 'acme/api', since: MORNING - 3_600_000, newWork: false })).toBe(5);
  });

  it('BU02 a run that ended with no report holds its reservation, unsettled: the wait names it and the command that settles it; an operator settles it once, recorded as who, and the waiting issue starts', async () => {
    const { h, first } = await oneAtATime();
    h.launcher.finish(first);
    await h.engine.reaperTick();
    expect((await h.store.runs.get(first))!.outcome).toBe('failure');
    const pass = await h.engine.schedulerTick();
    expect(afkStarts(h)).toEqual(['issue#1']);
    expect(pass.waiting.map((w) => w.subject)).toEqual(['issue#1', 'issue#2']);
    expect(pass.waiting[0]!.reason.recovery).toBe(
      `It starts when the budget starts again at 2026-12-01T00:00:00Z. 1 run ended without reporting what they spent and still hold $5.00 of it (${first} $5.00): once you know what one spent, \`yoke runs settle RUN --usd N\` gives the rest back. To allow more, raise budget.daily_usd in .github/yoke.yml of acme/api; to let more runs share it, lower agent.max_usd.`,
    );
    // `yoke plan` gives the same wait.
    const plan = await h.engine.nextPass('acme/api');
    expect(plan.ok && plan.value.waiting[0]!.recovery).toBe(pass.waiting[0]!.reason.recovery);

    // The fleet report and the dashboard name it, with the command.
    const report = await buildFleetReport(h.fleet, null);
    expect(
      formatFleetReport(report)
        .split('\n')
        .filter((l) => l.includes(first)),
    ).toEqual([
      `! Run ${first} (acme/api afk_auto) ended without reporting what it spent, so the budgets still hold its reservation of $5.00.`,
      `    to recover: Once you know what it spent (your model provider's usage page), \`yoke runs settle ${first} --usd N\` sets it and gives the rest back.`,
    ]);
    expect(renderUnsettled(report.unsettled)).toBe(
      `<h3>Unsettled runs</h3><p>These ended without reporting what they spent, so the budgets hold their whole reservations. Once you know what one spent, settle it.</p><table class="unsettled"><tr><th>run</th><th>repository</th><th>kind</th><th>holds</th><th>settle it</th></tr>\n<tr><td>${first}</td><td><a href="/yoke/repos/acme/api">acme/api</a></td><td>afk_auto</td><td>$5.00</td><td><code>yoke runs settle ${first} --usd N</code></td></tr></table>`,
    );

    const settled = await settleRun(h.fleet, first, 0, 'operator');
    expect(settled).toEqual({
      ok: true,
      value: `Settled run ${first} (acme/api afk_auto issue#1) at $0.00: the budgets held $5.00 for it, its reservation, and now hold $0.00.`,
    });
    const run = (await h.store.runs.get(first))!;
    expect([run.cost?.usd, run.settled]).toEqual([0, { by: 'operator', at: MORNING }]);
    // Once: a second settle, or one of a run that reported, says what it costs and how.
    const again = await settleRun(h.fleet, first, 3, 'operator');
    expect(again.ok ? null : [again.refusal.code, again.refusal.message, again.refusal.recovery]).toEqual([
      'run_already_costed',
      `Run ${first} already costs $0.00: operator settled it at 2026-11-30T09:00:00Z.`,
      'Nothing to do: a run is settled once, and only when it ended without reporting what it spent (`yoke fleet report` lists those).',
    ]);
    // Nothing held of $5 now: #1 starts again.
    expect((await buildFleetReport(h.fleet, null)).unsettled).toEqual([]);
    await h.engine.schedulerTick();
    expect(afkStarts(h)).toEqual(['issue#1', 'issue#1']);
    // A live run is not settled: what it spends is counted as it reports.
    const live = h.launcher.starts[1]!.runId;
    const refused = await settleRun(h.fleet, live, 0, 'operator');
    expect(refused.ok ? null : [refused.refusal.code, refused.refusal.recovery]).toEqual([
      'run_settle_live',
      `Nothing to do while it runs; if it ends without reporting what it spent, settle it then (\`yoke runs settle ${live} --usd N\`).`,
    ]);
    const unknown = await settleRun(h.fleet, 'r-nope', 0, 'operator');
    expect(unknown.ok ? null : unknown.refusal.code).toBe('run_not_found');
  });

  it('BU02 a report that comes after the reaper ended its run does not count as its result, but what it spent is recorded against it in place of the reservation', async () => {
    const { h, first } = await oneAtATime();
    h.launcher.finish(first);
    await h.engine.reaperTick();
    const late = await reportAs(h, first, {
      outcome: 'success',
      summary: 'done',
      cost: { usd: 0.75, input_tokens: 9000, output_tokens: 800 },
    });
    expect(late.ok ? null : [late.refusal.code, late.refusal.message]).toEqual([
      'run_reported_late',
      `Run ${first} had already ended (failure), so its result does not count; what it spent ($0.75) is recorded against it.`,
    ]);
    const run = (await h.store.runs.get(first))!;
    expect([run.outcome, run.reportedOutcome, run.cost]).toEqual([
      'failure',
      null,
      { usd: 0.75, inputTokens: 9000, outputTokens: 800 },
    ]);
    // Only once, and only with the run's own credential.
    const twice = await reportAs(h, first, {
      outcome: 'success',
      summary: 'done',
      cost: { usd: 0, input_tokens: 0, output_tokens: 0 },
    });
    expect(twice.ok ? null : twice.refusal.code).toBe('run_not_live');
    const forged = await reportRunResult(h.fleet, noAuth, {
      runId: first,
      bearer: 'not-its-secret',
      body: { outcome: 'failure', summary: 'x', cost: { usd: 0, input_tokens: 0, output_tokens: 0 } },
    });
    expect(forged.ok ? null : forged.refusal.code).toBe('run_secret_invalid');
    expect((await h.store.runs.get(first))!.cost!.usd).toBe(0.75);
    // $0.75 held of $5, and the next $5 run would pass it: the wait names no unsettled run now.
    const pass = await h.engine.schedulerTick();
    expect(pass.waiting[0]!.reason.recovery).toBe(
      'Nothing to do: it starts when the budget starts again at 2026-12-01T00:00:00Z. To allow more, raise budget.daily_usd in .github/yoke.yml of acme/api; to let more runs share it, lower agent.max_usd.',
    );
  });

  it('BU02 a run reaped as never started gives its reservation back; if its workflow turns up after all and reports, what it spent is charged against it', async () => {
    const { h, first } = await oneAtATime();
    // Its process never started, as far as the launcher can tell: reaped, its $5 given back.
    h.launcher.table.running.delete(first);
    h.clock.advance(10 * 60_000);
    await h.engine.reaperTick();
    expect((await h.store.runs.get(first))!.reservedUsd).toBe(0);
    const charged = () => h.store.spend.charged({ repo: 'acme/api', since: MORNING - 3_600_000, newWork: false });
    const before = await charged();
    const late = await reportAs(h, first, {
      outcome: 'success',
      summary: 'done',
      cost: { usd: 1.1, input_tokens: 5000, output_tokens: 500 },
    });
    expect(late.ok ? null : late.refusal.code).toBe('run_reported_late');
    expect(await charged()).toBeCloseTo(before + 1.1, 9);
  });

  it('BU03 a run whose limit is more than the whole budget is told it can never start under it, and what to change, not to wait', async () => {
    const h = makeHarness({ clock: new ManualClock(MORNING), policy: { globalCap: 3 } });
    h.forge.addRepo('acme/api', { auto: true, budget: { daily_usd: 3 }, agent: { max_usd: 4 } });
    h.forge.addIssue('acme/api', 1);
    const pass = await h.engine.schedulerTick();
    expect(afkStarts(h)).toEqual([]);
    expect(pass.waiting[0]!.reason.recovery).toBe(
      'It cannot start under this budget: its limit of $4.00 is more than the whole budget. Lower agent.max_usd in .github/yoke.yml to $3.00 or less, or raise budget.daily_usd in .github/yoke.yml of acme/api.',
    );
  });
});
