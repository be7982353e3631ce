import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// The order the files start in. On two workers the run ends when its last long file does: the longest start
// first, then the other files that run alone, then the unit files, which fill the gaps. vitest's own order needs
// its cache of earlier runs' times, which a clean clone (CI) does not have.

/** The slowest files, slowest first, as measured on a 2-core machine with hooks included (`node bin/slowest-tests.mjs --cache`). */
export const SLOWEST_FIRST = [
  'test/http/dashboard.browser.test.ts',
  'test/sandbox/runs-reach.e2e.test.ts',
  'test/package.test.ts',
  'test/sandbox/postgres.e2e.test.ts',
  'test/agent/agents.e2e.test.ts',
  'test/lint.test.ts',
  'test/sandbox/merge-queue.e2e.test.ts',
  'test/sandbox/life.e2e.test.ts',
  'test/agent/containment.e2e.test.ts',
  'test/sandbox/recovery.e2e.test.ts',
  'test/sandbox/mission.e2e.test.ts',
  'test/sandbox/fast-forward.e2e.test.ts',
  'test/fleet/fleet.processes.test.ts',
  'test/sandbox/attacks.e2e.test.ts',
  'test/cli/init.test.ts',
  'test/sandbox/delivery-attacks.e2e.test.ts',
  'test/fleet/landing.property.test.ts',
  'test/agent/runner.test.ts',
  'test/start.test.ts',
  'test/observe/prometheus.test.ts',
  'test/cli/errors.test.ts',
  'test/sandbox/notices.e2e.test.ts',
  'test/sandbox/delivery.e2e.test.ts',
];

export default class SlowestFirst extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification): number => {
      const at = SLOWEST_FIRST.indexOf(relative(f.project.config.root, f.moduleId));
      if (at >= 0) return at;
      return SLOWEST_FIRST.length + (f.project.name === 'unit' ? 1 : 0);
    };
    return Promise.resolve([...files].sort((a, b) => rank(a) - rank(b)));
  }
}
