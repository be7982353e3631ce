import { resolve } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// ESLint (eslint.config.js) guards the promises of src/, test/ and bench/ (and sandbox/):
// none is dropped on the floor or misused. typescript-eslint's rules find
// the floating and conditional ones; yoke's own (eslint-rules/promises.js)
// the rest. Each kind is planted once in test/fixtures/promises/sample.ts
// (test/lint.planted.test.ts: a file of its own, for typescript-eslint keeps
// one project service per process, and the sample needs another).

const ROOT = resolve(import.meta.dirname, '..');

describe('the lint of src/, test/ and bench/ (ESLint)', () => {
  it('finds no promise left floating or misused', async () => {
    const results = await new ESLint({ cwd: ROOT }).lintFiles(['src', 'sandbox', 'test', 'bench']);
    const problems = results.flatMap((r) =>
      r.messages.map((m) => `${r.filePath.slice(ROOT.length + 1)}:${m.line}: ${m.ruleId ?? 'parse'}: ${m.message}`),
    );
    expect(problems).toEqual([]);
  }, 180_000);
});
