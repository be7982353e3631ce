import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_FILES, DEMO_REPO, demoEnvironments } from '../../sandbox/demo-repo.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import { METRICS } from '../../src/http/operator/metrics.js';
import { GITHUB_ROUTES } from '../../src/forge/github/routes.js';
import { parseSamples, samplesOf, sumOf, type Sample } from '../helpers/prometheus-text.js';

// `/yoke/metrics` from a running yoke after the whole mission (five labelled issues, a reject and its fix, a
// review-driven fix, merges, a deployment run with QA and close-out): each figure is what the store holds, read
// the same way the store is. mission.e2e.test.ts runs the mission with METRICS_TOKEN set and scrapes once its last
// run was reaped; these tests read that scrape and that sandbox (the last of them grows its fleet, so it runs last).

export const METRICS_TOKEN = 'sandbox-metrics-token-0123456789abcdef0123';

/** `/yoke/metrics` (or `path`) of the sandbox's yoke, with `token` as its bearer. */
export const scrapeOf =
  (sandbox: Sandbox) =>
  (token: string | null, path = '/yoke/metrics') =>
    fetch(`${sandbox.yokeUrl}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

/** The scrape's samples, once the content type says it is Prometheus's text format. */
export async function scrapedSamples(sandbox: Sandbox): Promise<Sample[]> {
  const res = await scrapeOf(sandbox)(METRICS_TOKEN);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseSamples(await res.text());
}

export function describeMetricsAfterMission(after: () => { sandbox: Sandbox; samples: Sample[] }): void {
  describe('the metrics after the mission', () => {
    let sandbox: Sandbox;
    let samples: Sample[];
    let scrape: ReturnType<typeof scrapeOf>;
    beforeAll(() => {
      ({ sandbox, samples } = after());
      scrape = scrapeOf(sandbox);
    });

    it('are served to the metrics token and to an operator, and refused to anyone else, naming the fix', async () => {
      expect((await scrape(sandbox.apiToken)).status).toBe(200);
      const refused = await scrape(null);
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ error: { code: 'unauthorized' } });
      // A person's token reads the dashboard, not the fleet's figures.
      expect((await scrape(sandbox.personToken('maintainer'))).status).toBe(401);
      expect((await scrape('not-the-metrics-token-0123456789abcdef0123')).status).toBe(401);
    });

    it('declare every metric METRICS names, and only those', () => {
      const names = new Set(samples.map((s) => s.name.replace(/_(bucket|sum|count)$/, '')));
      expect([...names].filter((n) => !(n in METRICS))).toEqual([]);
      for (const name of Object.keys(METRICS).filter((n) => METRICS[n as keyof typeof METRICS].kind !== 'gauge'))
        expect(names.has(name) || name === 'yoke_github_requests_total').toBe(true);
    });

    it("count the launches the store recorded, by kind, and the pass's leader", async () => {
      const runs = await sandbox.runtime.store.runs.listAll();
      const byKind = new Map<string, number>();
      for (const r of runs) byKind.set(r.kind, (byKind.get(r.kind) ?? 0) + 1);
      for (const [kind, n] of byKind)
        expect([kind, sumOf(samples, 'yoke_launches_total', { kind, result: 'launched' })]).toEqual([kind, n]);
      expect(sumOf(samples, 'yoke_passes_total')).toBeGreaterThan(0);
      expect(sumOf(samples, 'yoke_pass_seconds_count')).toBe(sumOf(samples, 'yoke_passes_total'));
      expect(sumOf(samples, 'yoke_leader')).toBe(1);
      expect(sumOf(samples, 'yoke_leader_epoch')).toBeGreaterThan(0);
    });

    it('show the fleet as the store holds it: nothing live, the cap, the repository unpaused, the deployment run', async () => {
      const { store } = sandbox.runtime;
      expect(sumOf(samples, 'yoke_runs_live')).toBe(await store.runs.countLive());
      expect(sumOf(samples, 'yoke_cap')).toBe(sandbox.runtime.settings.globalCap);
      expect(sumOf(samples, 'yoke_cap_used')).toBe(0);
      // Unpaused: not named at all; the fleet's zero stands for it.
      expect(samplesOf(samples, 'yoke_repo_paused').map((s) => [s.labels.repo, s.value])).toEqual([['', 0]]);
      const statuses = new Map<string, number>();
      for (const r of await store.deploymentRuns.list()) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      expect(
        Object.fromEntries(samplesOf(samples, 'yoke_deployment_runs').map((s) => [s.labels.status, s.value])),
      ).toEqual(Object.fromEntries(statuses));
    });

    it('count the verdicts, the flaky heads and the merges the store recorded', async () => {
      const runs = await sandbox.runtime.store.runs.listAll();
      for (const verdict of ['accept', 'reject'])
        expect([verdict, sumOf(samples, 'yoke_lander_verdicts_total', { verdict })]).toEqual([
          verdict,
          runs.filter((r) => r.kind === 'lander' && r.verdict === verdict).length,
        ]);
      expect(sumOf(samples, 'yoke_lander_verdicts_total', { verdict: 'reject' })).toBeGreaterThan(0);
      const merged = (await sandbox.runtime.store.merges.listForRepo(DEMO_REPO)).filter((m) => m.state === 'merged');
      expect(sumOf(samples, 'yoke_merges_total', { state: 'merged' })).toBe(merged.length);
      expect(merged.length).toBe(5);
      expect(samplesOf(samples, 'yoke_flaky_heads_total')).toHaveLength(1);
    });

    it("count GitHub's requests by route template, never by an id, and the webhooks yoke was sent", () => {
      const routes = samplesOf(samples, 'yoke_github_requests_total');
      expect(routes.length).toBeGreaterThan(0);
      expect(routes.filter((s) => /\/\d+(\/|$)/.test(s.labels.route ?? ''))).toEqual([]);
      // Every value is one of GitHub's templates yoke declares: no repository's name, whatever page it came from.
      const templates = new Set(GITHUB_ROUTES.map((r) => r.slice(r.indexOf(' ') + 1)));
      expect(routes.map((s) => s.labels.route).filter((r) => !templates.has(r ?? ''))).toEqual([]);
      expect(routes.filter((s) => JSON.stringify(s.labels).toLowerCase().includes(DEMO_REPO.split('/')[1]!))).toEqual(
        [],
      );
      expect(sumOf(samples, 'yoke_github_requests_total', { method: 'GET' })).toBeGreaterThan(0);
      expect(sumOf(samples, 'yoke_webhook_deliveries_total')).toBeGreaterThan(0);
    });

    it('keep their labels bounded: only the labels each metric declares, and no run id among their values', async () => {
      const declared = (name: string): readonly string[] => {
        const base = name.replace(/_(bucket|sum|count)$/, '') as keyof typeof METRICS;
        return [...METRICS[base].labels, ...(name.endsWith('_bucket') ? ['le'] : [])];
      };
      expect(samples.flatMap((s) => Object.keys(s.labels).filter((k) => !declared(s.name).includes(k)))).toEqual([]);
      const runIds = [
        ...(await sandbox.runtime.store.runs.listAll()).map((r) => r.id),
        ...(await sandbox.runtime.store.deploymentRuns.list()).map((r) => r.id),
      ];
      expect(samples.filter((s) => Object.values(s.labels).some((v) => runIds.some((id) => v.includes(id))))).toEqual(
        [],
      );
    });

    it('BU07 serve as many series for a fleet of 50 repositories as for one of 5: no label names a repository', async () => {
      const { store } = sandbox.runtime;
      // More repositories opted in on the same installation, idle, as an organization's fleet grows; each read by a pass.
      const grow = async (from: number, to: number) => {
        const names = Array.from({ length: to - from }, (_, i) => `acme/extra-${from + i}`);
        // Set up as the demo is, its deploy environments included (a repository without them adds a 404 series once,
        // when the delivery sweep first reads them: bounded by the route, but not by the pass this test waits on).
        const repos = names.map((name) => {
          const repo = sandbox.forge.createRepo(name, { files: DEMO_FILES, installationId: 1 });
          for (const e of demoEnvironments(sandbox.forge.opts.appSlug))
            sandbox.forge.deployments.setEnvironment(repo, e.name, e.ruleApps);
          return repo;
        });
        // Added to the installation by its owner: GitHub says so (installation_repositories), and yoke lists it again.
        sandbox.forge.state.announceAdded(1, repos, sandbox.forge.user('acme'));
        await sandbox.waitUntil(
          async () => (await Promise.all(names.map((n) => store.repos.lastRead(n)))).every(Boolean),
          60_000,
          `a pass to read ${names.length} new repositories`,
        );
        // Two passes more, so that what a pass reads of each repository after its first read (its environments) is read too.
        const passes = async () => sumOf(parseSamples(await (await scrape(METRICS_TOKEN)).text()), 'yoke_passes_total');
        const after = (await passes()) + 2;
        await sandbox.waitUntil(async () => (await passes()) >= after, 30_000, 'two more passes');
        const res = await scrape(METRICS_TOKEN);
        return parseSamples(await res.text()).map((x) => `${x.name}${JSON.stringify(Object.entries(x.labels).sort())}`);
      };
      const five = await grow(1, 5);
      const fifty = await grow(5, 50);
      expect((await store.repos.list()).length).toBe(50);
      expect([fifty.filter((x) => !five.includes(x)), five.filter((x) => !fifty.includes(x))]).toEqual([[], []]);
      expect(fifty.length).toBe(five.length);
      expect(fifty.filter((x) => /extra-\d/.test(x))).toEqual([]);
    }, 120_000);
  });
}
