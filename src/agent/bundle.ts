import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

// yoke's runner as one file for a workflow job to fetch from yoke's own URL:
// built from src/agent/main.ts when yoke starts (about a second), served at
// GET /yoke/runner.mjs. Its sha256 goes out with every dispatch, and the
// workflow refuses a download that does not match. Node 20, the runner
// images' own, runs it.

export interface RunnerBundle {
  code: string;
  sha256: string;
}

const here = dirname(fileURLToPath(import.meta.url));
// From the sources in a checkout, or from the compiled JavaScript of the installed package.
const entry = existsSync(join(here, 'main.ts')) ? join(here, 'main.ts') : join(here, 'main.js');

export async function buildRunnerBundle(): Promise<RunnerBundle> {
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
  });
  const code = out.outputFiles[0]!.text;
  return { code, sha256: createHash('sha256').update(code).digest('hex') };
}

let memo: Promise<RunnerBundle> | null = null;

/** The bundle, built once per process. */
export function runnerBundle(): Promise<RunnerBundle> {
  memo ??= buildRunnerBundle();
  return memo;
}
