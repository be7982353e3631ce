import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { postgresSql } from '../../src/store/sql/postgres-sql.js';
import { migrateSql } from '../../src/store/sql/schema.js';
import type { Sql } from '../../src/store/sql/sql.js';
import { until } from '../helpers/fleet.js';
import { havePostgres, usePostgres } from '../helpers/postgres.js';
import { BUDGET } from './fleet-budget.js';
import { int, nullable, real, text } from '../../src/store/sql/columns.js';

// SP06/SP08/TR13 across processes: three yoke processes on one PostgreSQL,
// each ticking (when it leads) and kicked at random, never pass the cap
// between them; and when the leader is killed mid-pass, nothing is lost and
// another process leads within two ticks. See fleet-worker.ts.

const pg = usePostgres();
const CAP = 3;

interface Worker {
  name: string;
  child: ChildProcess;
  lines: Record<string, unknown>[];
  exit: Promise<number | null>;
}

function worker(
  url: string,
  name: string,
  seed: number,
  iterations: number,
  forever = false,
  budgeted = false,
): Worker {
  const child = spawn(
    process.execPath,
    [
      '--import',
      import.meta.resolve('tsx'),
      join(import.meta.dirname, 'fleet-worker.ts'),
      url,
      name,
      String(seed),
      String(iterations),
      String(CAP),
      ...(forever ? ['--forever'] : []),
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, YOKE_TEST_BUDGET: budgeted ? '1' : '0' },
    },
  );
  const lines: Record<string, unknown>[] = [];
  let buf = '';
  child.stdout!.on('data', (c: Buffer) => {
    buf += c.toString();
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
    }
  });
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exit = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => (code !== 0 && code !== null && console.error(err), resolve(code))),
  );
  return { name, child, lines, exit };
}

/** What holds whatever interleaving ran: the cap, one live run per subject, no run lost. */
async function checkFleet(sql: Sql): Promise<{ launched: number }> {
  const runs = await sql.all(
    { id: text, repo: text, subject: text, status: text, live_at_launch: int, cap_at_launch: int },
    'SELECT * FROM runs',
  );
  for (const r of runs)
    expect(r.live_at_launch, `run ${r.id} was launched with ${r.live_at_launch} live`).toBeLessThanOrEqual(CAP);
  const live = runs.filter((r) => r.status === 'live');
  expect(live.length).toBeLessThanOrEqual(CAP);
  expect(new Set(live.map((r) => `${r.repo}:${r.subject}`)).size).toBe(live.length);
  // Every process running out there is tracked by its run; every run still live is running out there or not yet reaped.
  const world = await sql.all({ run_id: text, state: text }, 'SELECT * FROM world_runs');
  const byId = new Map(runs.map((r) => [r.id, r]));
  for (const w of world) expect(byId.has(w.run_id), `process ${w.run_id} out there has no run`).toBe(true);
  for (const w of world.filter((x) => x.state === 'running'))
    expect(byId.get(w.run_id)!.status, `run ${w.run_id} runs out there`).toBe('live');
  return { launched: runs.length };
}

/** BU01, BU02: no budget holds more than its limit: what runs launched today reported, or else reserved. */
async function checkBudgets(sql: Sql): Promise<{ reserved: number }> {
  const rows = await sql.all(
    { repo: text, held: real, reserved: int },
    `SELECT repo, SUM(COALESCE(cost_usd, reserved_usd, 0)) AS held, SUM(CASE WHEN reserved_usd > 0 THEN 1 ELSE 0 END) AS reserved
     FROM runs GROUP BY repo`,
  );
  for (const r of rows) expect(Number(r.held), `${r.repo} holds`).toBeLessThanOrEqual(BUDGET.repo + 1e-6);
  const fleet = rows.reduce((sum, r) => sum + Number(r.held), 0);
  expect(fleet, 'the fleet holds').toBeLessThanOrEqual(BUDGET.fleet + 1e-6);
  // A run that never started gave its reservation back; one reported costs what it reported.
  const unstarted = await sql.all(
    { id: text, reserved_usd: nullable(real) },
    "SELECT id, reserved_usd FROM runs WHERE status = 'ended' AND cost_usd IS NULL AND id NOT IN (SELECT run_id FROM world_runs)",
  );
  for (const u of unstarted) expect(Number(u.reserved_usd ?? 0), `${u.id} never started`).toBe(0);
  return { reserved: rows.reduce((sum, r) => sum + Number(r.reserved), 0) };
}

const WORLD_TABLE =
  'CREATE TABLE IF NOT EXISTS world_runs (run_id TEXT PRIMARY KEY, state TEXT NOT NULL, started_by TEXT NOT NULL)';

describe.skipIf(!havePostgres)('three yoke processes on one PostgreSQL', () => {
  it('SP06 SP08 TR13 random ticks, kicks and finishing runs in three processes never pass the cap between them', async () => {
    const url = await pg.db();
    const sql = postgresSql(url);
    await migrateSql(sql);
    // The world table, made once before the workers start: three CREATE TABLE IF NOT EXISTS at once can race on PostgreSQL.
    await sql.exec(WORLD_TABLE);
    try {
      const workers = [worker(url, 'yoke-a', 11, 160), worker(url, 'yoke-b', 23, 160), worker(url, 'yoke-c', 37, 160)];
      expect(await Promise.all(workers.map((w) => w.exit))).toEqual([0, 0, 0]);
      const summaries = workers.map(
        (w) => w.lines.find((l) => l.event === 'summary') as { maxSeen: number; passes: number; errors: string[] },
      );
      const { launched } = await checkFleet(sql);
      expect(Math.max(...summaries.map((s) => s.maxSeen))).toBeLessThanOrEqual(CAP);
      // No pass met the database refusing a second live run of a subject: the locks kept them apart before it had to.
      expect(summaries.map((s) => s.errors)).toEqual([[], [], []]);
      // Every process ran passes, and together they crossed the cap many times over.
      for (const s of summaries) expect(s.passes).toBeGreaterThan(10);
      expect(launched).toBeGreaterThan(4 * CAP);
      expect((await sql.get({ n: int }, 'SELECT MAX(live_at_launch) AS n FROM runs'))!.n).toBe(CAP);
    } finally {
      await sql.close();
    }
  }, 120_000);

  it('BU01 BU02 three processes launching at once never pass a budget between them; what never started gave its reservation back', async () => {
    const url = await pg.db();
    const sql = postgresSql(url);
    await migrateSql(sql);
    await sql.exec(WORLD_TABLE);
    try {
      const workers = [
        worker(url, 'yoke-a', 13, 160, false, true),
        worker(url, 'yoke-b', 29, 160, false, true),
        worker(url, 'yoke-c', 41, 160, false, true),
      ];
      expect(await Promise.all(workers.map((w) => w.exit))).toEqual([0, 0, 0]);
      await checkFleet(sql);
      const { reserved } = await checkBudgets(sql);
      // Money was reserved many times over, and the fleet's budget was reached: something waited for it.
      expect(reserved).toBeGreaterThan(6);
      const held = (await sql.get({ n: real }, 'SELECT SUM(COALESCE(cost_usd, reserved_usd, 0)) AS n FROM runs'))!.n;
      expect(Number(held)).toBeGreaterThan(BUDGET.fleet - 2 * BUDGET.run);
    } finally {
      await sql.close();
    }
  }, 120_000);

  it('TR13 the leader killed mid-pass (SIGKILL): the cap holds, no run is lost, and another process leads within two ticks', async () => {
    const url = await pg.db();
    const sql = postgresSql(url);
    await migrateSql(sql);
    // The world table, made once before the workers start: three CREATE TABLE IF NOT EXISTS at once can race on PostgreSQL.
    await sql.exec(WORLD_TABLE);
    const workers = [
      worker(url, 'yoke-a', 5, 0, true),
      worker(url, 'yoke-b', 7, 0, true),
      worker(url, 'yoke-c', 9, 0, true),
    ];
    try {
      const leader = async () =>
        (await sql.get({ holder: text }, "SELECT holder FROM leaders WHERE role = 'ticks'"))?.holder ?? null;
      await until(async () => (await leader()) !== null, 'a leader', 20_000);
      const first = (await leader())!;
      const doomed = workers.find((w) => w.name === first)!;
      // Kill it while it is inside a pass, at a launch.
      const seen = doomed.lines.length;
      await until(() => doomed.lines.slice(seen).some((l) => l.event === 'pass'), 'the leader to be mid-pass', 20_000);
      doomed.child.kill('SIGKILL');
      const killedAt = Date.now();
      expect(await doomed.exit).toBe(null);
      // Its lease (1 s, renewed every 300 ms) lapses; a follower takes it at its next tick.
      await until(async () => ![null, first].includes(await leader()), 'another process to lead', 10_000);
      const tookMs = Date.now() - killedAt;
      expect(tookMs).toBeLessThan(1_000 + 2 * 1_000);
      // The fleet goes on: runs keep launching after the kill.
      const before = (await sql.get({ n: int }, 'SELECT COUNT(*) AS n FROM runs'))!.n;
      await until(
        async () => (await sql.get({ n: int }, 'SELECT COUNT(*) AS n FROM runs'))!.n > before + CAP,
        'launches after the kill',
        30_000,
      );
      for (const w of workers.filter((x) => x !== doomed)) w.child.kill('SIGTERM');
      expect(await Promise.all(workers.filter((x) => x !== doomed).map((w) => w.exit))).toEqual([0, 0]);
      await checkFleet(sql);
      // Nothing the dead leader recorded is left live without a process: the new leader's reaper closed what never started.
      const orphans = await sql.all(
        { id: text },
        "SELECT id FROM runs WHERE status = 'live' AND id NOT IN (SELECT run_id FROM world_runs)",
      );
      expect(orphans).toEqual([]);
    } finally {
      for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
      await sql.close();
    }
  }, 120_000);
});
