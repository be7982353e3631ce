import { describe, expect, it, vi } from 'vitest';
import { parseDeliverySettings } from '../../../src/config/delivery.js';
import { buildFleetReport } from '../../../src/http/operator/report.js';
import { needsYou } from '../../../src/http/pages/needs-you.js';
import {
  gatedStages,
  judgeEnvironments,
  sweepEnvironments,
} from '../../../src/delivery/deployments/environment-check.js';
import { DELIVERY, REPO, makeDeliveryHarness } from '../../helpers/delivery.js';

const TEN_MIN = 10 * 60_000;

describe("DP05 the environments yoke's rule must hold", () => {
  it('DP05 only deploy stages after a QA stage are gated; each environment is missing, without yoke, or protected', () => {
    const settings = parseDeliverySettings(REPO, {
      stages: [
        { name: 'staging', kind: 'deploy', command: 'x' },
        { name: 'qa', kind: 'qa' },
        { name: 'canary', kind: 'deploy', command: 'x', environment: 'production' },
        { name: 'production', kind: 'deploy', command: 'x' },
      ],
    });
    if (settings.state !== 'valid') throw new Error('bad fixture');
    const gated = gatedStages(settings.settings);
    expect(gated).toEqual([
      { stage: 'canary', environment: 'production' },
      { stage: 'production', environment: 'production' },
    ]);
    expect(judgeEnvironments(gated, new Map(), 'yoke').map((j) => j.code)).toEqual([
      'environment_missing',
      'environment_missing',
    ]);
    expect(
      judgeEnvironments(gated, new Map([['production', { exists: true, ruleApps: ['other'] }]]), 'yoke')[0]!.code,
    ).toBe('environment_rule_missing');
    expect(
      judgeEnvironments(gated, new Map([['production', { exists: true, ruleApps: ['other', 'yoke'] }]]), 'yoke')[0]!
        .code,
    ).toBe('environment_protected');
  });

  it("DP05 the fleet report and the dashboard's Needs you warn of a gated environment without yoke's rule, with the setting to make; read again only every ten minutes", async () => {
    const h = await makeDeliveryHarness();
    h.forge.environments.set(`${REPO}:production`, { exists: true, ruleApps: [] });
    const reads = vi.spyOn(h.forge, 'readEnvironmentRules');
    await sweepEnvironments(h.fleet, TEN_MIN);
    const report = await buildFleetReport(h.fleet, null);
    expect(report.environments).toEqual([
      {
        repo: REPO,
        stage: 'production',
        environment: 'production',
        code: 'environment_rule_missing',
        message:
          "Environment production of acme/api (stage production) does not have yoke's protection rule: anyone who can run its deploy can ship a commit whose QA never settled.",
        recovery:
          'Enable it: Settings, Environments, `production`, Deployment protection rules, tick `yoke`, Save protection rules.',
      },
    ]);
    expect(needsYou(report, h.clock.now())).toContainEqual({
      repo: REPO,
      what: report.environments[0]!.message,
      command: report.environments[0]!.recovery,
    });
    // The maintainer enables it; the next read, ten minutes on, clears the warning.
    h.forge.environments.set(`${REPO}:production`, { exists: true, ruleApps: ['yoke'] });
    await sweepEnvironments(h.fleet, TEN_MIN);
    expect(reads).toHaveBeenCalledTimes(1);
    h.clock.advance(TEN_MIN);
    await sweepEnvironments(h.fleet, TEN_MIN);
    expect(reads).toHaveBeenCalledTimes(2);
    expect((await buildFleetReport(h.fleet, null)).environments).toEqual([]);
  });

  it('DP05 an environment that does not exist is named too; a repository with no gated stage is not read', async () => {
    const h = await makeDeliveryHarness();
    await sweepEnvironments(h.fleet, TEN_MIN);
    expect((await buildFleetReport(h.fleet, null)).environments.map((e) => e.code)).toEqual(['environment_missing']);
    const ungated = await makeDeliveryHarness({ config: { delivery: { ...DELIVERY, stages: [DELIVERY.stages[0]] } } });
    const reads = vi.spyOn(ungated.forge, 'readEnvironmentRules');
    await sweepEnvironments(ungated.fleet, TEN_MIN);
    expect(reads).not.toHaveBeenCalled();
  });
});
