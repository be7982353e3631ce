import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

// Built once for a test run: the CLI as one module, for the test files that start it as a process many times
// (each `bin/yoke.js` in a checkout starts a second node that compiles src/ through tsx: 1.5 s a call, against
// 0.7 s for this). It lies two folders below the root, as src/cli/ does, so the paths the CLI finds relative to
// its own module (package.json, templates/, app.yml) are the same. `bin/yoke.js` itself is still run by the
// README's and the package's tests.
const ROOT = join(import.meta.dirname, '..', '..');
export const TEST_CLI = join(ROOT, '.test-build', 'cli', 'run.mjs');

export default async function setup(): Promise<void> {
  const dir = join(ROOT, '.test-build', 'cli');
  mkdirSync(dir, { recursive: true });
  await build({
    entryPoints: [join(ROOT, 'src', 'cli', 'main.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outfile: join(dir, 'main.mjs'),
    logLevel: 'warning',
  });
  writeFileSync(TEST_CLI, "const { main } = await import('./main.mjs');\nawait main(process.argv.slice(2));\n");
}
