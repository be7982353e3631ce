import { createServer, type AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { attachDemoPlans, deliverDemo } from '../../sandbox/deliver.js';
import { Sandbox } from '../../sandbox/sandbox.js';
import { runCli } from '../../src/cli/main.js';
import { startYoke } from '../../src/server.js';
import { postgresSql } from '../../src/store/sql/postgres-sql.js';
import { LATEST_VERSION, migrateSql } from '../../src/store/sql/schema.js';
import { havePostgres } from '../helpers/postgres.js';
import { nullable, real, text } from '../../src/store/sql/columns.js';
import { DEMO_FILES, DEMO_REPO } from '../../sandbox/demo-repo.js';
import { DEMO_DELIVERY_RECORDS, sortedRecords } from '../helpers/delivery-records.js';
import { METRICS } from '../../src/http/operator/metrics.js';
import { parseSamples, samplesOf, sumOf } from '../helpers/prometheus-text.js';

// `npm run sandbox -- --postgres`: the whole mission on PostgreSQL, with two
// yoke processes on it: the forge's webhooks go to one, the runs report to the
// other (this test's process runs the first; the second is `npm start`'s own
// entry as a child process).

let sandbox: Sandbox | null = null;
afterAll(async () => {
  await sandbox?.stop();
}, 30_000);

describe.skipIf(!havePostgres)('the sandbox on PostgreSQL', () => {
  it('BU01 merges, delivers and closes out all five demo issues with two yoke processes on one PostgreSQL: webhooks to one, run reports to the other; the $5 day they share, spent by $2 runs, is never over-held; the driver of its delivery, two of whose dispatch answers are dropped, recovers and leaves the same records', async () => {
    const s = (sandbox = new Sandbox({
      launcher: 'actions',
      failAgent: 0,
      postgres: true,
      tickSeconds: 1,
      reaperSeconds: 1,
      // Two yokes spend one budget: $2 runs under a $5 day, so a third reservation never fits, though the cap is 4.
      env: { YOKE_DAILY_USD: '5', YOKE_GLOBAL_CAP: '4' },
      files: { '.github/yoke.yml': `${DEMO_FILES['.github/yoke.yml']!}agent: { max_usd: 2 }\n` },
    }));
    await s.start();
    // What the day's budget holds, read from the store the two processes share, as often as it can be.
    const watch = postgresSql(s.databaseUrl!, { max: 1 });
    const day = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
    let mostHeld = 0;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const row = await watch.get(
          { usd: nullable(real) },
          'SELECT SUM(COALESCE(cost_usd, reserved_usd, 0)) AS usd FROM runs WHERE launched_at >= ?',
          [day],
        );
        mostHeld = Math.max(mostHeld, Number(row?.usd ?? 0));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    expect(s.reportUrl).not.toBe(s.yokeUrl);
    expect(s.forge.webhook!.url).toBe(`${s.yokeUrl}/api/github/webhooks`);
    await attachDemoPlans(s);
    await s.waitUntil(() => s.done(), 150_000, 'the demo issues to merge');
    // The driver's connection to yoke drops two of its dispatch answers after yoke acted on them: it recovers
    // through its result waits, and the delivery leaves the records one with none dropped leaves (mission.e2e).
    const result = await deliverDemo(s, { dropAnswers: 2, log: () => {}, timeoutMs: 90_000 });
    expect(result.status).toBe('succeeded');
    expect(result.dropped).toBe(2);
    expect(result.recovered).toBeGreaterThanOrEqual(2);
    expect(await sortedRecords(s, result)).toEqual(DEMO_DELIVERY_RECORDS);
    expect((await s.runtime.store.deploymentRuns.list()).filter((r) => r.repo === DEMO_REPO)).toHaveLength(1);
    watching = false;
    await watcher;
    await watch.close();
    // Every AFK run and fix reserved its $2; the day never held more than its $5, and it was reached for.
    const spending = (await s.runs()).filter((r) => r.kind !== 'lander');
    expect(new Set(spending.map((r) => r.reservedUsd))).toEqual(new Set([2]));
    expect(mostHeld).toBeGreaterThan(3);
    expect(mostHeld).toBeLessThanOrEqual(5 + 1e-9);
    // The forge's webhooks went to the first process, which answered each.
    expect(s.forge.deliveries.length).toBeGreaterThan(10);
    expect(s.forge.deliveries.filter((d) => d.status !== 200)).toEqual([]);
    const summary = await s.summary();
    expect(summary.map((r) => [r.number, r.state, r.closeout])).toEqual(
      [1, 2, 3, 4, 5].map((n) => [n, 'merged', `delivered #${n}`]),
    );
    // Every run was told to report to the second process, and every AFK run's report landed there (none ended unreported).
    // The agent runs (the deploy stages' workflow runs report nothing: yoke reads them from GitHub).
    const dispatched = s.forge.runner.runs.filter((w) => w.workflow === 'yoke-run.yml').map((w) => w.inputs.api_url);
    expect(dispatched.length).toBeGreaterThan(0);
    expect(new Set(dispatched)).toEqual(new Set([s.reportUrl]));
    const runs = await s.runs();
    expect(runs.filter((r) => r.kind === 'afk_auto').map((r) => [r.reportedOutcome, r.outcome])).toEqual(
      Array(5).fill(['success', 'success']),
    );
    // Both processes share the store: both hold a process lease, and one of them leads the ticks.
    const sql = postgresSql(s.databaseUrl!, { max: 1 });
    try {
      const living = await sql.all({ id: text }, 'SELECT id FROM processes WHERE alive_until > ?', [Date.now()]);
      expect(living).toHaveLength(2);
      const leader = await sql.get({ holder: text }, "SELECT holder FROM leaders WHERE role = 'ticks'");
      expect(living.map((p) => p.id)).toContain(leader!.holder);
    } finally {
      await sql.close();
    }
    // The database door opens on the same PostgreSQL (--db URL) and reaches the run through yoke's own code.
    const out: string[] = [];
    const err: string[] = [];
    const door = await runCli(['watch', 'deploy', '--db', s.databaseUrl!, '--', result.run], {
      out: (l) => out.push(l),
      err: (l) => err.push(l),
      env: s.doorEnv(),
      fetch,
    });
    expect([door, err]).toEqual([
      1,
      [
        `Deployment run ${result.run} has succeeded; only an active run moves.\nTo recover: See \`yoke deployment-runs get ${result.run}\`; start a new run with \`yoke deployment-runs create\` if work is left.`,
      ],
    ]);
  }, 240_000);

  it("serves, from two yokes on one PostgreSQL, each one's own work and the fleet's figures once, from the leader", async () => {
    const s = sandbox!;
    await s.waitUntil(async () => (await s.runtime.store.runs.countLive()) === 0, 20_000, 'the last runs to end');
    const scrape = async (url: string) =>
      parseSamples(
        await (await fetch(`${url}/yoke/metrics`, { headers: { authorization: `Bearer ${s.apiToken}` } })).text(),
      );
    const [first, second] = [await scrape(s.yokeUrl), await scrape(s.reportUrl)];
    // One of them leads, and only it serves the fleet's figures: summed over both, none is counted twice.
    expect(sumOf(first, 'yoke_leader') + sumOf(second, 'yoke_leader')).toBe(1);
    const [leader, follower] = sumOf(first, 'yoke_leader') === 1 ? [first, second] : [second, first];
    expect(sumOf(leader, 'yoke_cap')).toBe(s.runtime.settings.globalCap);
    expect(
      follower.filter(
        (x) => x.name.startsWith('yoke_') && (METRICS as Record<string, { scope: string }>)[x.name]?.scope === 'fleet',
      ),
    ).toEqual([]);
    const statuses = samplesOf(first, 'yoke_deployment_runs').concat(samplesOf(second, 'yoke_deployment_runs'));
    expect(statuses.map((x) => [x.labels.status, x.value])).toEqual([['succeeded', 1]]);
    // Each process counts its own work: the launches both made are the runs the store holds, each once.
    const runs = await s.runs();
    for (const kind of new Set(runs.map((r) => r.kind)))
      expect([
        kind,
        sumOf(first, 'yoke_launches_total', { kind, result: 'launched' }) +
          sumOf(second, 'yoke_launches_total', { kind, result: 'launched' }),
      ]).toEqual([kind, runs.filter((r) => r.kind === kind).length]);
    // The forge's webhooks went to the first process only.
    expect(sumOf(first, 'yoke_webhook_deliveries_total')).toBeGreaterThan(0);
    expect(sumOf(second, 'yoke_webhook_deliveries_total')).toBe(0);
  }, 60_000);

  it('a yoke refuses to start on a PostgreSQL store a newer yoke migrated, naming both versions', async () => {
    const s = sandbox!;
    const sql = postgresSql(s.databaseUrl!.replace(/\/yoke$/, '/postgres'), { max: 1 });
    await sql.exec('CREATE DATABASE newer');
    await sql.close();
    const url = s.databaseUrl!.replace(/\/yoke$/, '/newer');
    const newer = postgresSql(url, { max: 1 });
    await migrateSql(newer);
    await newer.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [
      LATEST_VERSION + 1,
      'from a newer yoke',
      new Date().toISOString(),
    ]);
    await newer.close();
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = probe.address() as AddressInfo;
        probe.close(() => resolve(p));
      });
    });
    await expect(startYoke({ ...s.appEnv(), PORT: String(port), YOKE_DATABASE_URL: url })).rejects.toThrow(
      `The store's schema is at version ${LATEST_VERSION + 1}, newer than this yoke knows (${LATEST_VERSION}): a newer yoke migrated it. Run that version of yoke (or newer) against it, or restore a backup taken before the upgrade.`,
    );
  }, 60_000);
});
