import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    pool: 'forks',
    // Both cores of a 2-core machine: the files are independent (each its own folders, ports and databases).
    maxWorkers: 2,
    testTimeout: 20_000,
    globalSetup: ['test/helpers/postgres-global.ts', 'test/helpers/commands-global.ts', 'test/helpers/cli-global.ts'],
  },
});
