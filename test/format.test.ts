import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import * as prettier from 'prettier';
import { describe, expect, it } from 'vitest';

// The code is formatted by Prettier (.prettierrc.json: 120 columns, single
// quotes), not by hand: `npm run format` writes it, and this check fails on a
// file it would change. What .prettierignore leaves out (fixtures whose lines
// other tests count) is not checked.

const ROOT = resolve(import.meta.dirname, '..');

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules') return [];
    return statSync(path).isDirectory() ? tsFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** The files of `dirs` under ROOT that Prettier would change, by path. */
export async function unformatted(root: string, dirs: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const file of dirs.flatMap((d) => tsFiles(join(root, d)))) {
    const info = await prettier.getFileInfo(file, { ignorePath: join(root, '.prettierignore') });
    if (info.ignored) continue;
    const options = await prettier.resolveConfig(file);
    if (!(await prettier.check(readFileSync(file, 'utf8'), { ...options, filepath: file })))
      out.push(relative(root, file));
  }
  return out;
}

describe('the format of the code (Prettier)', () => {
  it('leaves no file of src/, sandbox/, test/ or bench/ that Prettier would change', async () => {
    expect(await unformatted(ROOT, ['src', 'sandbox', 'test', 'bench'])).toEqual([]);
  }, 120_000);

  it('finds a file Prettier would change (the check itself can fail)', async () => {
    const options = await prettier.resolveConfig(join(ROOT, 'src/main.ts'));
    expect(options).toMatchObject({ printWidth: 120, singleQuote: true });
    expect(await prettier.check('const a = {b:1}\n', { ...options, filepath: 'x.ts' })).toBe(false);
    expect(await prettier.check('const a = { b: 1 };\n', { ...options, filepath: 'x.ts' })).toBe(true);
  });
});
