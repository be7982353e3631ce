import { describe, expect, it } from 'vitest';
import { makeHarness } from '../helpers/fleet.js';
import { sweepCloseouts } from '../../src/delivery/gate/check.js';
import { syncQaLabels } from '../../src/delivery/gate/labels.js';
import { sweepEnvironments } from '../../src/delivery/deployments/environment-check.js';
import { sweepProtectionReviews } from '../../src/delivery/deployments/protection-rule.js';

// SC10, the store's half so far: an idle pass reads what the store holds of its repositories a query per kind (runs,
// claims, AFK labels, asks, the repositories' own rows), not a query per repository each.

/** The store statements `what` makes over `n` repositories, after a first pass has listed them. */
async function statementsOf(
  n: number,
  what: (h: ReturnType<typeof makeHarness>) => Promise<unknown>,
  dashboards = false,
): Promise<number> {
  const h = makeHarness({ policy: { globalCap: 5, dashboardIssuesPerPass: 100 } });
  for (let i = 0; i < n; i++) h.forge.addRepo(`idle/r${i}`, { dashboard_issue: dashboards });
  await h.registered;
  await h.engine.schedulerTick();
  let statements = 0;
  const sql = h.store.sql;
  const [all, get, run] = [sql.all.bind(sql), sql.get.bind(sql), sql.run.bind(sql)];
  sql.all = (...a) => (statements++, all(...a));
  sql.get = (...a) => (statements++, get(...a));
  sql.run = (...a) => (statements++, run(...a));
  await what(h);
  return statements;
}

/** The store statements the second of two idle passes makes over `n` repositories. */
const statementsOfAnIdlePass = (n: number, dashboards = false) =>
  statementsOf(n, (h) => h.engine.schedulerTick(), dashboards);

/** The leader's sweeps, as its reaper's tick runs them: close-outs, qa: labels, environments, protection reviews. */
async function sweeps(h: ReturnType<typeof makeHarness>): Promise<void> {
  const ctx = h.engine.context();
  await sweepCloseouts(ctx);
  await syncQaLabels(ctx);
  await sweepEnvironments(ctx, 60_000);
  await sweepProtectionReviews(ctx);
}

describe('SC10 an idle pass and the store', () => {
  it('SC10 an idle pass makes as many store statements over 40 repositories as over 4', async () => {
    const few = await statementsOfAnIdlePass(4);
    expect(await statementsOfAnIdlePass(40)).toBe(few);
    expect(few).toBeLessThan(40);
  });

  it("SC10 the leader's sweeps over a fleet without delivery sections make as many store statements over 40 repositories as over 4", async () => {
    const few = await statementsOf(4, sweeps);
    expect(await statementsOf(40, sweeps)).toBe(few);
    expect(few).toBeLessThan(20);
  });

  it('SC10 and as many with a dashboard issue in every repository, once each is written', async () => {
    const few = await statementsOfAnIdlePass(4, true);
    expect(await statementsOfAnIdlePass(40, true)).toBe(few);
  });
});
