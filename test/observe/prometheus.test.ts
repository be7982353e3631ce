import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sandbox } from '../../sandbox/sandbox.js';
import { METRICS } from '../../src/http/operator/metrics.js';
import { freePort, havePrometheus, startPrometheus, type LocalPrometheus } from '../helpers/prometheus.js';

// What an operator takes as it is: the alerting rules and the Grafana dashboard yoke ships (they name
// only the metrics yoke serves, and promtool passes the rules), and a real Prometheus scraping a running
// yoke, asked through its own HTTP API for the live-run figure.

const RULES = 'docs/prometheus/yoke-alerts.yml';
const DASHBOARD = 'docs/grafana/yoke-dashboard.json';

/** The metric names an expression uses that yoke does not serve (a histogram's _bucket/_sum/_count are its own). */
function unknownMetrics(expr: string): string[] {
  const names = [...expr.matchAll(/\byoke_[a-z_]+\b/g)].map((m) => m[0].replace(/_(bucket|sum|count)$/, ''));
  return [...new Set(names)].filter((n) => !(n in METRICS));
}

describe('the alerting rules and the dashboard yoke ships', () => {
  const rules = readFileSync(RULES, 'utf8');
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: { targets: { expr: string }[] }[] };

  it('name only metrics yoke serves, in every rule and every panel', () => {
    const exprs = [
      ...[...rules.matchAll(/^\s+expr: (.*)$/gm)].map((m) => m[1]!),
      ...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr)),
    ];
    expect(exprs.length).toBe(8 + dashboard.panels.length);
    expect(exprs.flatMap(unknownMetrics)).toEqual([]);
    // The check can fail: a name yoke does not serve is found.
    expect(unknownMetrics('max(yoke_runs_alive) > 0 and rate(yoke_pass_seconds_bucket[5m]) > 0')).toEqual([
      'yoke_runs_alive',
    ]);
  });

  it.skipIf(!havePrometheus)('pass promtool check rules (and a broken copy does not)', () => {
    const ok = spawnSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
    expect([ok.status, ok.stdout]).toEqual([0, expect.stringContaining('SUCCESS: 8 rules found')]);
    const broken = spawnSync('promtool', ['check', 'rules', '/dev/stdin'], {
      encoding: 'utf8',
      input: rules.replace('max by (repo) (yoke_repo_paused) == 1', 'max by (repo (yoke_repo_paused) == 1'),
    });
    expect(broken.status).not.toBe(0);
  });
});

describe.skipIf(!havePrometheus)('BU07 the alerting rules, run by promtool on series', () => {
  /** `promtool test rules` on the shipped tests, against the rules as given. */
  function testRules(rules: string): { status: number | null; out: string } {
    const dir = mkdtempSync(join(tmpdir(), 'yoke-alerts-'));
    try {
      writeFileSync(join(dir, 'yoke-alerts.yml'), rules);
      copyFileSync(RULES.replace('.yml', '.test.yml'), join(dir, 'yoke-alerts.test.yml'));
      const r = spawnSync('promtool', ['test', 'rules', 'yoke-alerts.test.yml'], { cwd: dir, encoding: 'utf8' });
      return { status: r.status, out: `${r.stdout}${r.stderr}` };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const rules = readFileSync(RULES, 'utf8');

  it('BU07 fire each rule on the series that should (work waiting for money two hours, unsettled runs, a pause, a spent budget, a rate limit, no leader) and on none that should not', () => {
    const r = testRules(rules);
    expect([r.status, r.out.trim().split('\n').at(-1)?.trim()]).toEqual([0, 'SUCCESS']);
  });

  it.each([
    [
      'money: work waiting for a slot counts as waiting for money',
      'yoke_candidates_waiting{code="budget_reserved"}',
      'yoke_candidates_waiting',
    ],
    ['money: a wait is an alert at once', 'for: 2h', 'for: 0m'],
    ['unsettled runs never alert', 'max(yoke_runs_unsettled) > 0', 'max(yoke_runs_unsettled) > 100'],
  ])('BU07 fail when a rule is broken (%s)', (_what, from, to) => {
    expect(rules).toContain(from);
    expect(testRules(rules.replace(from, to)).status).not.toBe(0);
  });
});

describe.skipIf(!havePrometheus)('a real Prometheus scraping a running yoke', () => {
  let sandbox: Sandbox;
  let prometheus: LocalPrometheus;
  let metricsPort: number;
  const token = 'sandbox-metrics-token-0123456789abcdef0123';

  beforeAll(async () => {
    metricsPort = await freePort();
    // The agents take a while, so runs stay live while Prometheus scrapes.
    sandbox = new Sandbox({
      launcher: 'command',
      failAgent: 0,
      tickSeconds: 1,
      reaperSeconds: 1,
      agentDelayMs: 20_000,
      env: { YOKE_METRICS_TOKEN: token, YOKE_METRICS_ADDRESS: `127.0.0.1:${metricsPort}` },
    });
    await sandbox.start();
    await sandbox.waitUntil(async () => (await sandbox.runtime.store.runs.countLive()) > 0, 30_000, 'a run to be live');
  }, 60_000);

  afterAll(async () => {
    await prometheus?.stop();
    await sandbox?.stop();
  }, 30_000);

  for (const [how, job] of [
    [
      'through the API port, with the metrics token',
      () => ({
        job_name: 'yoke',
        metrics_path: '/yoke/metrics',
        authorization: { credentials: token },
        static_configs: [{ targets: [new URL(sandbox.yokeUrl).host] }],
      }),
    ],
    [
      'on its own address (YOKE_METRICS_ADDRESS), with no token',
      () => ({ job_name: 'yoke', static_configs: [{ targets: [`127.0.0.1:${metricsPort}`] }] }),
    ],
  ] as const)
    it(`returns the live-run figure the store holds, ${how}`, async () => {
      await prometheus?.stop();
      prometheus = await startPrometheus(job());
      let seen: { value: number }[] = [];
      for (let i = 0; i < 100 && seen.length === 0; i++) {
        seen = await prometheus.query('sum(yoke_runs_live)');
        if (!seen.length) await new Promise((r) => setTimeout(r, 200));
      }
      const up = await prometheus.query('up{job="yoke"}');
      expect(up.map((u) => u.value)).toEqual([1]);
      // Live runs wait on their agents for 20 s: what Prometheus scraped is what the store holds (asked
      // again for a few seconds, should a run have started or ended between a scrape and the store's answer).
      let live = await sandbox.runtime.store.runs.countLive();
      for (let i = 0; i < 20 && seen[0]?.value !== live; i++) {
        await new Promise((r) => setTimeout(r, 250));
        seen = await prometheus.query('sum(yoke_runs_live)');
        live = await sandbox.runtime.store.runs.countLive();
      }
      expect(live).toBeGreaterThan(0);
      expect(seen.map((s) => s.value)).toEqual([live]);
    }, 60_000);
});
