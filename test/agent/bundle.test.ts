import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { buildRunnerBundle, ENGLISH_ONLY } from '../../src/agent/bundle.js';

// The runner a workflow job downloads and starts is bundled with zod's English messages alone.

const dir = mkdtempSync(join(tmpdir(), 'yoke-bundle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the runner's bundle", () => {
  it("holds zod's English locale and no other", async () => {
    const { code } = await buildRunnerBundle();
    expect(code).toContain('// node_modules/zod/v4/locales/en.js');
    expect(code.match(/^\/\/ node_modules\/zod\/v4\/locales\/.*$/gm)).toEqual(['// node_modules/zod/v4/locales/en.js']);
  });

  it('says what was wrong with an input in English, as zod does unbundled, and names English as its one locale', async () => {
    const entry = join(dir, 'entry.mjs');
    writeFileSync(
      entry,
      "import { z } from 'zod';\nconsole.log(JSON.stringify([z.string().safeParse(1).error.issues[0].message, Object.keys(z.locales)]));\n",
    );
    const out = await build({
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      format: 'esm',
      write: false,
      logLevel: 'silent',
      nodePaths: [join(import.meta.dirname, '..', '..', 'node_modules')],
      plugins: [ENGLISH_ONLY],
    });
    const file = join(dir, 'out.mjs');
    writeFileSync(file, out.outputFiles[0]!.text);
    expect(JSON.parse(execFileSync(process.execPath, [file], { encoding: 'utf8' }))).toEqual([
      'Invalid input: expected string, received number',
      ['en'],
    ]);
  });
});
