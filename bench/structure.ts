import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

// `npm run structure`: the shape of src/, counted from the TypeScript
// compiler's parse (not from text searches), so the figures issue 46 asks for
// are the same each time they are taken.

export interface StructureFigures {
  /** `sql.get<T>(…)`, `tx.all<T>(…)` and the like in store/: each an unchecked cast of a row. */
  generic_row_reads: number;
  /** Function bodies (declarations, methods, arrows, expressions) longer than 80 lines. */
  functions_over_80_lines: number;
  /** Functions declaring five or more parameters. */
  functions_5_plus_params: number;
  /** Interfaces and type aliases named `…Context` or `…Deps`. */
  context_types: number;
  /** `x as T` and `<T>x`, not counting `as const`. */
  as_casts: number;
  /** Files of 350 lines or more. */
  files_350_plus_lines: number;
}

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...tsFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const ROW_READS = new Set(['get', 'all']);

export function structureFigures(
  root: string,
  detail?: (figure: keyof StructureFigures, where: string) => void,
): StructureFigures {
  const figures: StructureFigures = {
    generic_row_reads: 0,
    functions_over_80_lines: 0,
    functions_5_plus_params: 0,
    context_types: 0,
    as_casts: 0,
    files_350_plus_lines: 0,
  };
  const src = join(root, 'src');
  for (const file of tsFiles(src)) {
    const text = readFileSync(file, 'utf8');
    const rel = relative(root, file);
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    const count = (figure: keyof StructureFigures, node?: ts.Node, what?: string) => {
      figures[figure]++;
      const line = node ? sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1 : lines;
      detail?.(figure, `${rel}:${line}${what ? ` ${what}` : ''}`);
    };
    if (lines >= 350) count('files_350_plus_lines', undefined, `${lines} lines`);
    const inStore = rel.startsWith(join('src', 'store'));
    const visit = (node: ts.Node): void => {
      if (
        inStore &&
        ts.isCallExpression(node) &&
        node.typeArguments?.length &&
        ts.isPropertyAccessExpression(node.expression) &&
        ROW_READS.has(node.expression.name.text)
      )
        count('generic_row_reads', node);
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
        const end = sf.getLineAndCharacterOfPosition(node.end).line;
        const name = node.name && ts.isIdentifier(node.name) ? node.name.text : '(anonymous)';
        if (end - start + 1 > 80) count('functions_over_80_lines', node, `${name} ${end - start + 1} lines`);
        if (node.parameters.length >= 5)
          count('functions_5_plus_params', node, `${name} ${node.parameters.length} params`);
      }
      if (
        (ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) &&
        /(Context|Deps)$/.test(node.name.text)
      )
        count('context_types', node, node.name.text);
      if (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) {
        const isConst = ts.isTypeReferenceNode(node.type) && node.type.typeName.getText(sf) === 'const';
        if (!isConst) count('as_casts', node);
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return figures;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const verbose = process.argv.includes('--detail');
  const figures = structureFigures(process.cwd(), verbose ? (f, where) => console.log(`  ${f} ${where}`) : undefined);
  for (const [name, value] of Object.entries(figures)) console.log(`${name}: ${value}`);
}
