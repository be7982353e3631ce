import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// Node 20 on every machine: every package `npm ci` installs accepts the Node
// yoke declares, and the one running these tests, so `npm ci` prints no
// EBADENGINE warning (content-type 3, pulled in by @octokit/request, needs
// Node 22: it is overridden to 2.1.0, which has the same parse and format).

const ROOT = resolve(import.meta.dirname, '..');
const lock = JSON.parse(readFileSync(resolve(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { engines?: { node?: string }; version?: string }>;
};
const declared = (JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } })
  .engines.node;

type Version = [number, number, number];
const parse = (v: string): Version => {
  const [a = 0, b = 0, c = 0] = v
    .replace(/^[=v]+/, '')
    .split('.')
    .map((p) => (/^\d+$/.test(p) ? Number(p) : 0));
  return [a, b, c];
};
const cmp = (a: Version, b: Version): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
/** How many leading parts a partial version names (`20` → 1, `20.19` → 2, `*`/`x` parts stop it). */
const named = (v: string): number =>
  v
    .replace(/^[=v]+/, '')
    .split('.')
    .findIndex((p) => !/^\d+$/.test(p)) === -1
    ? v.split('.').length
    : v
        .replace(/^[=v]+/, '')
        .split('.')
        .findIndex((p) => !/^\d+$/.test(p));

/** npm's range grammar, as far as engines fields in this lock use it: ||, spaces, >= > <= < =, ^, ~, x and *. */
export function satisfies(version: string, range: string): boolean {
  const v = parse(version);
  return range.split('||').some((alt) => {
    const parts = alt
      .trim()
      .replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1')
      .split(/\s+/)
      .filter(Boolean);
    return parts.every((p) => {
      const m = /^(>=|<=|>|<|=|\^|~)?(.*)$/.exec(p)!;
      const op = m[1] ?? '';
      const want = parse(m[2]!);
      const n = m[2] === '*' || m[2] === '' ? 0 : named(m[2]!);
      if (op === '>=') return cmp(v, want) >= 0;
      if (op === '>') return cmp(v, want) > 0;
      if (op === '<=') return cmp(v, want) <= 0;
      if (op === '<') return cmp(v, want) < 0;
      if (op === '^') return v[0] === want[0] && cmp(v, want) >= 0;
      if (op === '~') return v[0] === want[0] && v[1] === want[1] && cmp(v, want) >= 0;
      // A plain or partial version: 20.x, 6.*, 20, *.
      return v.slice(0, n).every((x, i) => x === want[i]);
    });
  });
}

describe('Node engines', () => {
  it('reads ranges as npm does', () => {
    expect(
      [
        '>=22',
        '^20.19.0 || >=22.12.0',
        '20.x || 22.x',
        '6.* || 8.* || >= 10.*',
        '>=18.20.0 <20 || >=20.12.1',
        '*',
        '>= 0.6',
      ].map((r) => satisfies('20.19.0', r)),
    ).toEqual([false, true, true, true, true, true, true]);
    expect(satisfies('20.18.1', '^20.19.0 || >=22.12.0')).toBe(false);
  });

  it(`every installed package accepts the Node yoke declares (${declared}) and the one running here (${process.versions.node})`, () => {
    const floor = /^>=\s*(\d+\.\d+\.\d+)$/.exec(declared)?.[1];
    expect(floor, 'package.json engines.node is ">=X.Y.Z"').toBeDefined();
    const refused = Object.entries(lock.packages)
      .filter(([, p]) => p.engines?.node)
      .filter(([, p]) => !satisfies(floor!, p.engines!.node!) || !satisfies(process.versions.node, p.engines!.node!))
      .map(([name, p]) => `${name.replace(/^node_modules\//, '')}@${p.version}: node ${p.engines!.node}`);
    expect(refused).toEqual([]);
  });
});
