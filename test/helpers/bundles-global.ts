import { join } from 'node:path';
import { buildCli, buildServer } from '../../sandbox/bundles.js';

// Built once for a test run (sandbox/bundles.ts): the CLI and yoke's server as single modules, for the test files
// that start them as processes many times. `bin/yoke.js` and `npm start` themselves are still run by the README's
// and the package's tests.
const BUILD = join(import.meta.dirname, '..', '..', '.test-build');
export const TEST_CLI = join(BUILD, 'cli', 'run.mjs');
export const TEST_SERVER = join(BUILD, 'yoke.mjs');

export default async function setup(): Promise<void> {
  await Promise.all([buildCli('.test-build'), buildServer('.test-build')]);
}
