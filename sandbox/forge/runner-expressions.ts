// The sandbox runner's share of GitHub Actions' expression language: a job's
// token grants from `permissions:`, `if:` conditions, and `${{ }}` substitution.

type Permissions = Record<string, string> | 'read-all' | 'write-all';

/** What a job's token may do, as GitHub derives it from `permissions:`. */
export function grants(perms: Permissions | undefined): { write: boolean; idToken: boolean } {
  if (perms === undefined || perms === 'write-all') return { write: true, idToken: perms === 'write-all' };
  if (perms === 'read-all') return { write: false, idToken: false };
  return {
    write: Object.entries(perms).some(([scope, level]) => scope !== 'id-token' && level === 'write'),
    idToken: perms['id-token'] === 'write',
  };
}

export type ExprCtx = Record<string, Record<string, string>>;

const lookup = (path: string, ctx: ExprCtx): unknown =>
  path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], ctx);

/** A job or step `if:`: `always()`, `success()`, `failure()`, `a == 'b'`, `a != 'b'`, joined by `&&`. */
export function evaluateCondition(expr: string | undefined, ctx: ExprCtx, failed: boolean): boolean {
  if (!expr) return !failed;
  const body = expr.replace(/^\$\{\{\s*|\s*\}\}$/g, '').trim();
  const terms = body.split('&&').map((t) => t.trim());
  const statusTerms = terms.filter((t) => /^(always|success|failure)\(\)$/.test(t));
  const statusOk =
    statusTerms.length === 0
      ? !failed
      : statusTerms.every((t) => (t === 'always()' ? true : t === 'failure()' ? failed : !failed));
  return (
    statusOk &&
    terms
      .filter((t) => !statusTerms.includes(t))
      .every((t) => {
        const m = /^([\w.-]+)\s*(==|!=)\s*'([^']*)'$/.exec(t);
        if (!m) throw new Error(`the sandbox runner cannot evaluate \`${t}\``);
        const value = String(lookup(m[1]!, ctx) ?? '');
        return m[2] === '==' ? value === m[3] : value !== m[3];
      })
  );
}

/** `${{ inputs.x || github.ref }}`-style expressions: enough for a dispatch workflow. */
export function substitute(text: string, ctx: Record<string, Record<string, string>>): string {
  return text.replace(/\$\{\{\s*(.+?)\s*\}\}/g, (_m, expr: string) => {
    for (const term of expr.split('||').map((t) => t.trim())) {
      const lit = /^'(.*)'$/.exec(term);
      const value = lit
        ? lit[1]!
        : term.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], ctx);
      if (value) return String(value);
    }
    return '';
  });
}
