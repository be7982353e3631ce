import { describe, expect, it } from 'vitest';
import { SPAWN_STAGES } from '../../src/fleet/candidate.js';
import { Metrics } from '../../src/http/metrics.js';
import { RUN_KINDS } from '../../src/store/runs.js';
import { makeHarness } from '../helpers/fleet.js';
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
});
