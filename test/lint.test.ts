import { resolve } from 'node:path';
import { ESLint } from 'eslint';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { tsProgram } from './helpers/ts-program.js';

// The compiler and ESLint (eslint.config.js) over src/, sandbox/, test/ and bench/, from one TypeScript program:
// building it is most of either's time, so `npm test` builds it once, here, rather than once in a `tsc --noEmit`
// before the tests and again in ESLint's own project service. The compiler finds no error (`npm run typecheck`
// is the same check, alone); ESLint guards the promises: none is dropped on the floor or misused.
// typescript-eslint's rules find the floating and conditional ones; yoke's own (eslint-rules/promises.js) the
// rest. Each kind is planted once in test/fixtures/promises/sample.ts (test/lint.planted.test.ts: a file of its
// own, for the sample is a program of its own).

const ROOT = resolve(import.meta.dirname, '..');

/** A diagnostic as tsc prints it: `file(line,col): error TS1234: text`. */
function described(d: ts.Diagnostic): string {
  const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
  if (!d.file || d.start === undefined) return `error TS${d.code}: ${text}`;
  const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
  return `${d.file.fileName.slice(ROOT.length + 1)}(${line + 1},${character + 1}): error TS${d.code}: ${text}`;
}

let program: ts.Program;
beforeAll(() => {
  program = tsProgram();
}, 180_000);

describe('the compiler over src/, sandbox/, test/ and bench/', () => {
  it('finds no error, as `tsc --noEmit` would', () => {
    expect(program.getRootFileNames().some((f) => f.endsWith('src/main.ts'))).toBe(true);
    expect(ts.getPreEmitDiagnostics(program).map(described)).toEqual([]);
  }, 180_000);
});

describe('the lint of src/, sandbox/, test/ and bench/ (ESLint)', () => {
  it('finds no promise left floating or misused', async () => {
    const eslint = new ESLint({
      cwd: ROOT,
      overrideConfig: { languageOptions: { parserOptions: { projectService: false, programs: [program] } } },
    });
    const results = await eslint.lintFiles(['src', 'sandbox', 'test', 'bench']);
    expect(results.length).toBeGreaterThan(400);
    const problems = results.flatMap((r) =>
      r.messages.map((m) => `${r.filePath.slice(ROOT.length + 1)}:${m.line}: ${m.ruleId ?? 'parse'}: ${m.message}`),
    );
    expect(problems).toEqual([]);
  }, 180_000);
});
