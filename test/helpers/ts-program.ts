import { resolve } from 'node:path';
import ts from 'typescript';

// The TypeScript program tsconfig.json describes, built once for a test file: the compiler's check and ESLint's
// typed rules (parserOptions.programs) both read it (test/lint.test.ts, test/lint.planted.test.ts).

const ROOT = resolve(import.meta.dirname, '..', '..');

/** tsconfig.json's files and options, as `tsc` reads them. */
function tsconfig(): ts.ParsedCommandLine {
  return ts.getParsedCommandLineOfConfigFile(
    resolve(ROOT, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  )!;
}

/** The program `tsc --noEmit` builds; with `rootNames`, those files alone (and what they import), under its options. */
export function tsProgram(rootNames?: readonly string[]): ts.Program {
  const parsed = tsconfig();
  return ts.createProgram({
    rootNames: rootNames?.map((f) => resolve(ROOT, f)) ?? parsed.fileNames,
    options: parsed.options,
    projectReferences: parsed.projectReferences,
  });
}
