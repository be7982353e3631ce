import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    pool: 'forks',
    testTimeout: 20_000,
    globalSetup: ['test/helpers/postgres-global.ts', 'test/helpers/commands-global.ts', 'test/helpers/cli-global.ts'],
  },
});
