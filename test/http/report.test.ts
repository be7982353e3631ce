import { describe, expect, it } from 'vitest';
import { buildFleetReport } from '../../src/http/operator/report.js';
import { makeHarness } from '../helpers/fleet.js';

describe('the fleet report', () => {
  it('GH01 a repository that is disabled says so and how to fix it, even when it was paused before: a reset cannot lift it', async () => {
    const h = makeHarness();
    await h.store.repos.ensure('acme/api', 1, h.clock.now());
    for (let i = 0; i < 3; i++) await h.store.repos.addFailure('acme/api', 3, h.clock.now());
    await h.store.repos.setDisabled(
      'acme/api',
      '.github/yoke.yml is not valid: "autolnad" is not a setting here; did you mean "autoland"?',
      h.clock.now(),
    );
    const repo = (await buildFleetReport(h.fleet, null)).repos.find((r) => r.repo === 'acme/api')!;
    expect([repo.paused, repo.disabledReason !== null]).toEqual([true, true]);
    expect(repo.recovery).toBe(
      'Fix `.github/yoke.yml` on the default branch of acme/api; yoke re-reads it on its next pass.',
    );
  });
});
