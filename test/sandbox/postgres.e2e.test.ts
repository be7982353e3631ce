import { afterAll, describe, expect, it } from 'vitest';
import { attachDemoPlans, deliverDemo } from '../../src/sandbox/deliver.js';
import { Sandbox } from '../../src/sandbox/sandbox.js';
import { postgresSql } from '../../src/store/postgres-sql.js';
import { havePostgres } from '../helpers/postgres.js';

// `npm run sandbox -- --postgres`: the whole mission on PostgreSQL, with two
// yoke processes on it: the forge's webhooks go to one, the runs report to the
// other (this test's process runs the first; the second is `npm start`'s own
// entry as a child process).

let sandbox: Sandbox | null = null;
afterAll(async () => {
  await sandbox?.stop();
}, 30_000);

describe.skipIf(!havePostgres)('the sandbox on PostgreSQL', () => {
  it('merges, delivers and closes out all five demo issues with two yoke processes on one PostgreSQL: webhooks to one, run reports to the other', async () => {
    const s = (sandbox = new Sandbox({ launcher: 'actions', failAgent: 0, postgres: true, tickSeconds: 1, reaperSeconds: 1 }));
    await s.start();
    expect(s.reportUrl).not.toBe(s.yokeUrl);
    expect(s.forge.webhook!.url).toBe(`${s.yokeUrl}/api/github/webhooks`);
    await attachDemoPlans(s);
    await s.waitUntil(() => s.done(), 150_000, 'the demo issues to merge');
    const result = await deliverDemo(s, { dropAnswers: 0, log: () => {}, timeoutMs: 90_000 });
    expect(result.status).toBe('succeeded');
    // The forge's webhooks went to the first process, which answered each.
    expect(s.forge.deliveries.length).toBeGreaterThan(10);
    expect(s.forge.deliveries.filter((d) => d.status !== 200)).toEqual([]);
    const summary = await s.summary();
    expect(summary.map((r) => [r.number, r.state, r.closeout])).toEqual([1, 2, 3, 4, 5].map((n) => [n, 'merged', `delivered #${n}`]));
    // Every run was told to report to the second process, and every AFK run's report landed there (none ended unreported).
    const dispatched = s.forge.runner.runs.map((w) => w.inputs.api_url);
    expect(dispatched.length).toBeGreaterThan(0);
    expect(new Set(dispatched)).toEqual(new Set([s.reportUrl]));
    const runs = await s.runs();
    expect(runs.filter((r) => r.kind === 'afk_auto').map((r) => [r.reportedOutcome, r.outcome])).toEqual(Array(5).fill(['success', 'success']));
    // Both processes share the store: both hold a process lease, and one of them leads the ticks.
    const sql = postgresSql(s.databaseUrl!, { max: 1 });
    try {
      const living = await sql.all<{ id: string }>('SELECT id FROM processes WHERE alive_until > ?', [Date.now()]);
      expect(living).toHaveLength(2);
      const leader = await sql.get<{ holder: string }>("SELECT holder FROM leaders WHERE role = 'ticks'");
      expect(living.map((p) => p.id)).toContain(leader!.holder);
    } finally {
      await sql.close();
    }
  }, 240_000);
});
