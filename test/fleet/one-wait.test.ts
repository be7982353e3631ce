import { describe, expect, it } from 'vitest';
import { requestFix, requestLand, requestStart } from '../../src/fleet/runs/controls.js';
import { buildFleetReport } from '../../src/http/operator/report.js';
import { reportRunResult } from '../../src/http/api/run-report.js';
import { needsYou } from '../../src/http/pages/needs-you.js';
import { AUTOLAND, ManualClock, makeHarness, rejectedClaim, type Harness } from '../helpers/fleet.js';

// One wait, said the same everywhere: the reply to `/yoke start` (and `yoke repo start`, `/yoke land`,
// `/yoke fix`), "Needs you" on the dashboard and `yoke plan` all say the wait the pass would give now, with the
// same message and recovery, and none of them gives advice that cannot work.

const MORNING = Date.UTC(2026, 10, 30, 9, 0, 0);
const noAuth = { oidc: null, audience: 'http://yoke.test', reach: 'api' as const };
const afkStarts = (h: Harness) => h.launcher.starts.filter((s) => s.kind.startsWith('afk')).map((s) => s.subject);

/** A $5 day and $5 runs: #1 ran and failed without reporting, holding the whole day; #2 is labelled after. */
async function spentDay(): Promise<{ h: Harness; first: string }> {
  const h = makeHarness({ clock: new ManualClock(MORNING), policy: { globalCap: 3 } });
  h.forge.addRepo('acme/api', { auto: true, budget: { daily_usd: 5 }, agent: { max_usd: 5 } });
  h.forge.addIssue('acme/api', 1);
  await h.engine.schedulerTick();
  const first = h.launcher.starts[0]!.runId;
  h.launcher.finish(first);
  await h.engine.reaperTick();
  expect(afkStarts(h)).toEqual(['issue#1']);
  return { h, first };
}

describe('BU03 one wait, said the same everywhere', () => {
  it('BU03 `/yoke start` on an issue that waits for money says so, with the words `yoke plan` gives, not "launches on the next pass"', async () => {
    const { h, first } = await spentDay();
    h.forge.addIssue('acme/api', 12, []);
    const reply = await requestStart(h.fleet, 'acme/api', 12, { by: 'maint' });
    const plan = await h.engine.nextPass('acme/api');
    const wait = plan.ok ? plan.value.waiting.find((w) => w.subject === 'issue#12')! : null;
    expect(wait?.code).toBe('budget_reserved');
    expect(reply).toEqual({
      ok: true,
      value: `Queued a manual AFK run for #12, and it waits: ${wait!.message} To recover: ${wait!.recovery}`,
    });
    expect(reply.ok && reply.value).toBe(
      `Queued a manual AFK run for #12, and it waits: Waits for money: acme/api's daily budget holds $5.00 of its $5.00 (what runs reported they spent, and the reservations of runs that have not reported), and this run would reserve $5.00, its whole limit. To recover: It starts when the budget starts again at 2026-12-01T00:00:00Z. 1 run ended without reporting what they spent and still hold $5.00 of it (${first} $5.00): once you know what one spent, \`yoke runs settle RUN --usd N\` gives the rest back. To allow more, raise budget.daily_usd in .github/yoke.yml of acme/api; to let more runs share it, lower agent.max_usd.`,
    );
    expect(afkStarts(h)).toEqual(['issue#1']);
  });

  it('BU03 "Needs you" gives a failed issue that waits for money the wait and its recovery, not "comment `/yoke start` to try again now"', async () => {
    const { h } = await spentDay();
    const pass = await h.engine.schedulerTick();
    const report = await buildFleetReport(h.fleet, pass);
    const items = needsYou(report, h.clock.now()).filter((n) => n.what.includes('issue#1'));
    const wait = pass.waiting.find((w) => w.subject === 'issue#1')!.reason;
    expect(items).toHaveLength(1);
    expect(items[0]!.what.endsWith(`It waits to run again: ${wait.message}`)).toBe(true);
    expect(items[0]!.command).toBe(wait.recovery);
    expect(items[0]!.command).not.toContain('/yoke start');
  });

  it('BU03 at the cap, `/yoke start` says the cap and its live runs; with a free slot and money, that it launches; a blocked issue, what blocks it', async () => {
    const h = makeHarness({ clock: new ManualClock(MORNING), policy: { globalCap: 1 } });
    h.forge.addRepo('acme/api', { auto: true });
    for (const n of [11, 12, 13]) h.forge.addIssue('acme/api', n, []);
    h.forge.repo('acme/api').issues.find((i) => i.number === 13)!.blockers = ['#9'];
    await h.engine.schedulerTick();
    expect(await requestStart(h.fleet, 'acme/api', 11, { by: 'maint' })).toEqual({
      ok: true,
      value: 'Queued a manual AFK run for #11; there is a free slot and money for it, so it launches on the next pass.',
    });
    await h.engine.schedulerTick();
    expect(afkStarts(h)).toEqual(['issue#11']);
    const atCap = await requestStart(h.fleet, 'acme/api', 12, { by: 'maint' });
    expect(atCap.ok && atCap.value).toBe(
      'Queued a manual AFK run for #12, and it waits: Waits for a slot: 1 run(s) are live and acme/api may have at most 1 at once. To recover: Nothing to do: it starts when a run ends, after work further down the pipeline. To run more at once, raise YOKE_GLOBAL_CAP or YOKE_REPO_CAPS.',
    );
    const blocked = await requestStart(h.fleet, 'acme/api', 13, { by: 'maint' });
    expect(blocked.ok && blocked.value).toBe(
      "Queued a manual AFK run for #13, and it waits: #13 of acme/api is not started: it is blocked by 1 open issue, still open (GitHub's issue dependencies). To recover: Nothing to do: it starts once 1 open issue is closed. To start it sooner, remove the dependency (the issue's Relationships → Blocked by).",
    );
    // `yoke plan` gives the cap too (for all of the repository's new work at once).
    const plan = await h.engine.nextPass('acme/api');
    expect(plan.ok && plan.value.waiting.map((w) => [w.subject, w.code])).toEqual([[null, 'at_cap']]);
  });

  it('BU03 a lander reserves nothing: `/yoke land` waits only for the cap; `/yoke fix` waits for money as the fix run would', async () => {
    const h = makeHarness({ clock: new ManualClock(MORNING), policy: { globalCap: 3 } });
    h.forge.addRepo('acme/api', {
      ...AUTOLAND,
      fix_forward: { enabled: true, max_attempts: 2 },
      budget: { daily_usd: 2 },
      agent: { max_usd: 2 },
    });
    h.forge.addIssue('acme/api', 1);
    await h.engine.schedulerTick();
    const afk = h.launcher.starts[0]!;
    await reportRunResult(h.fleet, noAuth, {
      runId: afk.runId,
      bearer: afk.secret,
      body: { outcome: 'success', summary: 'done', cost: { usd: 0.5, input_tokens: 1, output_tokens: 1 } },
    });
    h.launcher.finish(afk.runId);
    await h.engine.reaperTick();
    // The lander the pass launches reserves nothing, and rejects; $0.50 of the $2 day spent, nothing live.
    await rejectedClaim(h, 'acme/api', { number: 10, issue: 1 });
    expect(await requestLand(h.fleet, 'acme/api', 10, 'maint')).toEqual({
      ok: true,
      value:
        'Queued a lander for #10 at its current head; there is a free slot and money for it, so it launches on the next pass.',
    });
    const fix = await requestFix(h.fleet, 'acme/api', 10, {
      by: 'maint',
      instructions: { text: 'Rename it.', commentId: 7 },
    });
    expect(fix.ok && fix.value).toBe(
      "Queued a fix run for #10 with your instructions, and it waits: Waits for money: acme/api's daily budget holds $0.50 of its $2.00 (what runs reported they spent, and the reservations of runs that have not reported), and this run would reserve $2.00, its whole limit. To recover: Nothing to do: it starts when the budget starts again at 2026-12-01T00:00:00Z. To allow more, raise budget.daily_usd in .github/yoke.yml of acme/api; to let more runs share it, lower agent.max_usd.",
    );
  });
});
