import { describe, expect, it } from 'vitest';
import { SPAWN_STAGES } from '../../src/fleet/candidate.js';
import { Metrics } from '../../src/http/operator/metrics.js';
import { RUN_KINDS } from '../../src/store/fleet/runs.js';
import { makeHarness } from '../helpers/fleet.js';
import { routeOf } from '../../src/forge/github/routes.js';
import { parseSamples, sumOf } from '../helpers/prometheus-text.js';

// SC07: a pass's figures reach the metrics: the GitHub requests it sent, and what each installation has left.

describe("a pass's figures", () => {
  it('SC07 count the GitHub requests sent while the pass ran, and each installation’s points and primary limit left', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', {}, 4);
    h.forge.budgetLeft = () => ({ points: 700, contentWrites: 60, primary: 3210 });
    const github = { requests: 40, notModified: 0 };
    const metrics = new Metrics({
      fleet: h.fleet,
      lastPass: () => h.engine.lastPass,
      lead: () => ({ leads: true, epoch: 1 }),
      github,
    });
    metrics.passStarted();
    github.requests += 17; // what the pass sent
    const report = await h.engine.schedulerTick();
    metrics.passed(report, 0.25);
    github.requests += 5; // after the pass: not its
    const samples = parseSamples(await metrics.scrape());
    expect(sumOf(samples, 'yoke_last_pass_github_requests')).toBe(17);
    expect(sumOf(samples, 'yoke_github_points_left', { installation: '4' })).toBe(700);
    expect(sumOf(samples, 'yoke_github_primary_left', { installation: '4' })).toBe(3210);
  });

  it('an idle fleet serves its live runs and waiting work as 0 for each kind and stage, not as no series at all', async () => {
    const h = makeHarness();
    const metrics = new Metrics({
      fleet: h.fleet,
      lastPass: () => h.engine.lastPass,
      lead: () => ({ leads: true, epoch: 1 }),
      github: { requests: 0, notModified: 0 },
    });
    const samples = parseSamples(await metrics.scrape());
    const series = (name: string) => samples.filter((s) => s.name === name).map((s) => [s.labels, s.value]);
    expect(series('yoke_runs_live')).toEqual(RUN_KINDS.map((kind) => [{ kind, repo: '' }, 0]));
    expect(series('yoke_candidates_waiting')).toEqual(SPAWN_STAGES.map((stage) => [{ stage, code: '' }, 0]));
  });

  it('SC07 hold as many series at 50 repositories as at 5: a repository is named only while it needs a person, and requests by their route template', async () => {
    const seriesAt = async (repos: number) => {
      const h = makeHarness({ policy: { globalCap: 3 } });
      for (let i = 0; i < repos; i++) {
        h.forge.addRepo(`acme/r${i}`, { auto: true });
        h.forge.addIssue(`acme/r${i}`, 1);
      }
      // What the GitHub client counts as a pass reads each repository: its issues, pulls and workflow runs.
      const byRoute = new Map<string, number>();
      for (let i = 0; i < repos; i++)
        for (const url of [
          `https://api.github.com/repos/acme/r${i}/issues?state=open&per_page=100`,
          `/repos/acme/r${i}/pulls`,
          `/repos/acme/r${i}/actions/workflows/yoke-run.yml/runs`,
          `https://api.github.com/repositories/${9000 + i}/issues?page=2`,
        ]) {
          const key = `GET 200 ${routeOf(url)}`;
          byRoute.set(key, (byRoute.get(key) ?? 0) + 1);
        }
      const metrics = new Metrics({
        fleet: h.fleet,
        lastPass: () => h.engine.lastPass,
        lead: () => ({ leads: true, epoch: 1 }),
        github: { requests: 0, notModified: 0, byRoute },
      });
      await h.engine.schedulerTick();
      const samples = parseSamples(await metrics.scrape());
      expect(samples.filter((x) => JSON.stringify(x.labels).includes(`acme/r${repos - 1}`))).toEqual([]);
      return samples.length;
    };
    const five = await seriesAt(5);
    expect(await seriesAt(50)).toBe(five);
  });
});
