import { resolve } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { tsProgram } from './helpers/ts-program.js';

// The lint (test/lint.test.ts) finds each kind of misused promise the old
// hand-written check planted, each once in test/fixtures/promises/sample.ts.

const ROOT = resolve(import.meta.dirname, '..');
const SAMPLE = 'test/fixtures/promises/sample.ts';

describe('the lint of promises, planted', () => {
  it('finds each kind the old hand-written check planted (the check itself can fail)', async () => {
    // The sample is left out of the build (tsconfig excludes it: one of its kinds does not compile), so it is linted
    // as a program of its own: the sample and what it imports, under tsconfig's options.
    const eslint = new ESLint({
      cwd: ROOT,
      ignore: false,
      overrideConfig: {
        languageOptions: { parserOptions: { projectService: false, programs: [tsProgram([SAMPLE])] } },
      },
    });
    const [result] = await eslint.lintFiles([SAMPLE]);
    expect(result!.messages.map((m) => `${m.line}: ${m.ruleId}`)).toEqual([
      '7: @typescript-eslint/no-floating-promises', // save();
      '11: @typescript-eslint/no-floating-promises', // save().then(() => {}): no rejection handler
      '13: @typescript-eslint/no-misused-promises', // if (!save())
      '14: yoke/promise-value', // save() ?? 1
      '15: yoke/promise-value', // save() === undefined
      '16: @typescript-eslint/no-misused-promises', // [1].filter(async () => save())
      '17: yoke/promise-as-any', // JSON.stringify(save())
      '18: yoke/expect-promise', // expect(async () => save())
      '19: yoke/expect-promise', // expect(save())
      '21: yoke/store-call-voided', // void store.repos.list()
    ]);
  }, 180_000);
});
