import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SLOWEST_FIRST } from './helpers/sequencer.js';

const ROOT = resolve(import.meta.dirname, '..');

describe('the order the test files start in', () => {
  it('names, among the slowest files that start first, only files that are there (a renamed one would start last)', () => {
    expect(SLOWEST_FIRST.filter((f) => !existsSync(resolve(ROOT, f)))).toEqual([]);
    expect(new Set(SLOWEST_FIRST).size).toBe(SLOWEST_FIRST.length);
  });
});
