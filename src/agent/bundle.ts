import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';

// yoke's runner as one file for a workflow job to fetch from yoke's own URL,
// served at GET /yoke/runner.mjs. Its sha256 goes out with every dispatch,
// and the workflow refuses a download that does not match. Node 20, the
// runner images' own, runs it. The package ships it built (`npm run build`
// writes dist/agent/runner.mjs), so installing yoke needs no bundler and no
// install script; a checkout builds it from src/agent/main.ts when yoke
// starts (about a second), with esbuild, a development dependency.

export interface RunnerBundle {
  code: string;
  sha256: string;
}

const here = dirname(fileURLToPath(import.meta.url));
// From the sources in a checkout, or from the compiled JavaScript of the installed package.
const entry = existsSync(join(here, 'main.ts')) ? join(here, 'main.ts') : join(here, 'main.js');
/** Where `npm run build` puts the runner, next to the compiled agent code. */
export const BUILT_RUNNER = join(here, 'runner.mjs');

const bundleOf = (code: string): RunnerBundle => ({ code, sha256: createHash('sha256').update(code).digest('hex') });

/**
 * zod names every locale it has (`z.locales`), and a bundle that holds `z` keeps all 64 of them: 361 of the
 * runner's 868 KB, parsed by every workflow job that starts it. The runner's messages are zod's English ones, so its
 * locales are English alone.
 */
export const ENGLISH_ONLY: Plugin = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[/\\]zod[/\\]/.test(args.importer)
        ? { path: join(dirname(args.importer), '..', 'locales', 'index.js'), namespace: 'zod-english-only' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-english-only' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(join(dirname(args.path), 'en.js'))};`,
      resolveDir: dirname(args.path),
    }));
  },
};

export async function buildRunnerBundle(): Promise<RunnerBundle> {
  const { build } = await import('esbuild');
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    write: false,
    minify: false,
    legalComments: 'none',
    logLevel: 'silent',
    banner: { js: '// yoke runner: built by yoke from its agent/main; run with node.' },
    plugins: [ENGLISH_ONLY],
  });
  return bundleOf(out.outputFiles[0]!.text);
}

/** The runner the package shipped, or (in a checkout) one built now. */
async function shippedOrBuilt(): Promise<RunnerBundle> {
  return existsSync(BUILT_RUNNER) ? bundleOf(readFileSync(BUILT_RUNNER, 'utf8')) : buildRunnerBundle();
}

let memo: Promise<RunnerBundle> | null = null;

/** The bundle, built once per process. */
export function runnerBundle(): Promise<RunnerBundle> {
  memo ??= shippedOrBuilt();
  return memo;
}
