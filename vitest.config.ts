import { configDefaults, defineConfig } from 'vitest/config';
import SlowestFirst from './test/helpers/sequencer.js';

// The files that start processes, servers, browsers or whole sandboxes, or take their time on purpose (property
// tests, the lint): each runs in a worker of its own. Every other file is a unit file (pure decisions, the store on
// :memory:, nock), and the unit files share their workers, so that a file does not pay again for the modules the
// one before it loaded (about a second each); test/helpers/each-file.ts leaves a worker as each file found it.
// `npm run test:unit` runs the unit files alone, the inner loop before a commit.
export const WHOLE_FILES = [
  'test/sandbox/**',
  'test/agent/**',
  'test/templates/**',
  'test/**/*.e2e.test.ts',
  'test/**/*.browser.test.ts',
  'test/**/*.processes.test.ts',
  'test/**/*.postgres.test.ts',
  'test/**/*.property.test.ts',
  'test/lint*.test.ts',
  'test/structure.test.ts',
  'test/format.test.ts',
  'test/package.test.ts',
  'test/start.test.ts',
  'test/deploy.test.ts',
  'test/observe/prometheus.test.ts',
  'test/cli/exec.test.ts',
  'test/cli/init.test.ts',
  'test/cli/errors.test.ts',
  'test/cli/config-check.test.ts',
  'test/leadership.test.ts',
  'test/launcher/launchers.test.ts',
  'test/store/cross-process.test.ts',
  'test/store/processes.test.ts',
  // It reads a forge's issues within one second of their writing, on the real clock: a file of its own keeps it so.
  'test/forge/repo-reader.test.ts',
];

export default defineConfig({
  test: {
    environment: 'node',
    pool: 'forks',
    // Both cores of a 2-core machine: the files are independent (each its own folders, ports and databases).
    maxWorkers: 2,
    testTimeout: 20_000,
    globalSetup: ['test/helpers/postgres-global.ts', 'test/helpers/commands-global.ts', 'test/helpers/bundles-global.ts'],
    setupFiles: ['test/helpers/each-file.ts'],
    sequence: { sequencer: SlowestFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...WHOLE_FILES],
          isolate: false,
        },
      },
      {
        extends: true,
        test: { name: 'whole', include: WHOLE_FILES.map((g) => (g.endsWith('**') ? `${g}/*.test.ts` : g)) },
      },
    ],
  },
});
