import { resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// No promise is dropped on the floor in src/, test/ or bench/: a call whose result is a promise
// is awaited, returned, handed on, or marked `void` on purpose. The store is
// becoming asynchronous (both engines share one async interface); a store
// call left without `await` would run out of order on PostgreSQL, and tsc
// does not say so. This is that check, with the compiler's own types.

const ROOT = resolve(import.meta.dirname, '..');
const PREDICATES = new Set(['filter', 'find', 'findIndex', 'findLast', 'some', 'every', 'sort', 'toSorted']);

function isPromise(checker: ts.TypeChecker, type: ts.Type): boolean {
  if (type.isUnion()) return type.types.some((t) => isPromise(checker, t));
  const name = type.getSymbol()?.getName();
  return name === 'Promise' || (name !== undefined && checker.getPropertyOfType(type, 'then') !== undefined && name !== 'Thenable' && /Promise/.test(name));
}

/** Every expression statement of src/ and test/ whose value is a promise and is not `void`ed, as file:line text. */
export function floatingPromises(files?: readonly string[]): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(resolve(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
  const program = ts.createProgram({ rootNames: files ? [...files] : config.fileNames.filter((f) => /\/(src|test|bench)\//.test(f)), options: config.options });
  const checker = program.getTypeChecker();
  const found: string[] = [];
  for (const sf of program.getSourceFiles()) {
    if (sf.isDeclarationFile || (!files && !/\/(src|test|bench)\//.test(sf.fileName))) continue;
    const visit = (node: ts.Node): void => {
      if (ts.isExpressionStatement(node)) {
        const e = node.expression;
        const assigned = ts.isBinaryExpression(e) && [ts.SyntaxKind.EqualsToken, ts.SyntaxKind.QuestionQuestionEqualsToken, ts.SyntaxKind.BarBarEqualsToken, ts.SyntaxKind.AmpersandAmpersandEqualsToken].includes(e.operatorToken.kind);
        // A chain that ends in .catch(handler), or .then(ok, failed), has decided what a failure means: it runs on its own on purpose.
        const end = ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression) ? { name: e.expression.name.text, args: e.arguments.length } : null;
        const caught = end !== null && ((end.name === 'catch' && end.args > 0) || (end.name === 'then' && end.args > 1));
        const dropped = !ts.isVoidExpression(e) && !ts.isAwaitExpression(e) && !assigned && !caught;
        if (dropped && isPromise(checker, checker.getTypeAtLocation(e))) {
          const { line } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
          found.push(`${sf.fileName.slice(ROOT.length + 1)}:${line + 1}: ${node.getText(sf).split('\n')[0]!.slice(0, 100)}`);
        }
      }
      // A promise used as a truth value is always true: `if (store.x())`, `!store.x()`, `a && store.x()`.
      // (A promise that may be absent, `Promise | null`, is a fair thing to test for.)
      const maybeAbsent = (t: ts.Type) => t.isUnion() && t.types.some((u) => (u.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined | ts.TypeFlags.Void)) !== 0);
      const truth = (e: ts.Expression | undefined) => {
        const type = e && checker.getTypeAtLocation(e);
        if (e && type && isPromise(checker, type) && !maybeAbsent(type) && !ts.isAwaitExpression(e)) {
          const { line } = sf.getLineAndCharacterOfPosition(e.getStart(sf));
          found.push(`${sf.fileName.slice(ROOT.length + 1)}:${line + 1}: used as a truth value: ${e.getText(sf).split('\n')[0]!.slice(0, 100)}`);
        }
      };
      if (ts.isIfStatement(node) || ts.isWhileStatement(node) || ts.isDoStatement(node)) truth(node.expression);
      else if (ts.isConditionalExpression(node)) truth(node.condition);
      else if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.ExclamationToken) truth(node.operand);
      else if (ts.isBinaryExpression(node) && [ts.SyntaxKind.AmpersandAmpersandToken, ts.SyntaxKind.BarBarToken, ts.SyntaxKind.QuestionQuestionToken].includes(node.operatorToken.kind)) truth(node.left);
      // A promise compared with a value is never equal to what it will hold (two promises compared are a fair identity test).
      else if (ts.isBinaryExpression(node) && [ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken, ts.SyntaxKind.EqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsToken].includes(node.operatorToken.kind)) {
        const [l, r] = [node.left, node.right].map((x) => isPromise(checker, checker.getTypeAtLocation(x)));
        if (l !== r) truth(l ? node.left : node.right);
      }
      // expect(promise) compares the promise, not what it holds (unless .resolves or .rejects follows).
      if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'expect' && node.arguments[0]) {
        const arg = node.arguments[0];
        const unwrapped = ts.isPropertyAccessExpression(node.parent) && ['resolves', 'rejects'].includes(node.parent.name.text);
        // expect(async () => …).toThrow() never sees the throw: the function answers a rejected promise.
        const asyncFn = (ts.isArrowFunction(arg) || ts.isFunctionExpression(arg)) && isPromise(checker, checker.getSignatureFromDeclaration(arg)!.getReturnType());
        if (!unwrapped && (asyncFn || isPromise(checker, checker.getTypeAtLocation(arg)))) {
          const { line } = sf.getLineAndCharacterOfPosition(arg.getStart(sf));
          found.push(`${sf.fileName.slice(ROOT.length + 1)}:${line + 1}: expected without await: ${arg.getText(sf).split('\n')[0]!.slice(0, 100)}`);
        }
      }
      // A promise handed to a parameter that takes anything (`unknown`, `any`) is kept or sent as a promise: JSON of it is {}.
      if (ts.isCallExpression(node) && !(ts.isIdentifier(node.expression) && node.expression.text === 'expect')) {
        const sig = checker.getResolvedSignature(node);
        node.arguments.forEach((arg, i) => {
          const param = sig?.parameters[Math.min(i, sig.parameters.length - 1)];
          const type = param && checker.getTypeOfSymbolAtLocation(param, node);
          if (type && (type.flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any)) !== 0 && isPromise(checker, checker.getTypeAtLocation(arg))) {
            const { line } = sf.getLineAndCharacterOfPosition(arg.getStart(sf));
            found.push(`${sf.fileName.slice(ROOT.length + 1)}:${line + 1}: a promise passed as any value: ${arg.getText(sf).split('\n')[0]!.slice(0, 100)}`);
          }
        });
      }
      // A store call voided is a write nobody waits for: on PostgreSQL it may land after what follows it.
      if (ts.isVoidExpression(node) && ts.isCallExpression(node.expression)) {
        const decl = checker.getResolvedSignature(node.expression)?.getDeclaration();
        const file = decl?.getSourceFile().fileName ?? '';
        if (/\/src\/store\/[^/]+\.ts$/.test(file) && isPromise(checker, checker.getTypeAtLocation(node.expression))) {
          const { line } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
          found.push(`${sf.fileName.slice(ROOT.length + 1)}:${line + 1}: a store call voided: ${node.getText(sf).split('\n')[0]!.slice(0, 100)}`);
        }
      }
      // An async predicate (filter, find, some, every, sort) answers a promise, which is always true: every element passes.
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && PREDICATES.has(node.expression.name.text) && node.arguments[0]) {
        const cb = node.arguments[0];
        if ((ts.isArrowFunction(cb) || ts.isFunctionExpression(cb)) && isPromise(checker, checker.getSignatureFromDeclaration(cb)!.getReturnType())) {
          const { line } = sf.getLineAndCharacterOfPosition(cb.getStart(sf));
          found.push(`${sf.fileName.slice(ROOT.length + 1)}:${line + 1}: a predicate that answers a promise: ${node.getText(sf).split('\n')[0]!.slice(0, 100)}`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return found;
}

describe('promises in src/, test/ and bench/', () => {
  // (Also: none is used as a truth value, which is always true.)
  it('none is left floating: each is awaited, returned, handed on or voided', () => {
    expect(floatingPromises()).toEqual([]);
  }, 60_000);

  it('finds one that is (the check itself can fail)', async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
    const dir = mkdtempSync(resolve(ROOT, 'test/.floating-'));
    try {
      const file = resolve(dir, 'sample.ts');
      writeFileSync(file, 'async function save(): Promise<void> {}\nexport async function f() {\n  save();\n  await save();\n  void save();\n  save().catch(() => {});\n  save().then(() => {});\n  save().then(() => {}, () => {});\n  if (!save()) return;\n  const x = save() ?? 1;\n  if (save() === undefined) return;\n  [1].filter(async () => save());\n  JSON.stringify(save());\n  expect(async () => save());\n  return save();\n}\n');
      expect(floatingPromises([file]).map((l) => l.replace(/^.*sample\.ts/, 'sample.ts'))).toEqual(['sample.ts:3: save();', 'sample.ts:7: save().then(() => {});', 'sample.ts:9: used as a truth value: save()', 'sample.ts:10: used as a truth value: save()', 'sample.ts:11: used as a truth value: save()', 'sample.ts:12: a predicate that answers a promise: [1].filter(async () => save())', 'sample.ts:13: a promise passed as any value: save()', 'sample.ts:14: expected without await: async () => save()']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
