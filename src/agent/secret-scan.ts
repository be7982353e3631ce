import { spawnSync } from 'node:child_process';
import { SECRET_SHAPES, secretForms } from '../kernel/redact.js';

// TR16: no secret leaves in a commit. Before a bundle is made (the agent job)
// and again before it is pushed (the deliver job, which runs none of the
// agent's code), the change's added lines and file names are searched for
// the values the job was given and for known token shapes. A find names the
// file, the line and the kind of secret, never the value.

/** The shapes redaction knows, without the global flag (a test of one line at a time keeps no state). */
const TOKEN_SHAPES = SECRET_SHAPES.map((s) => ({
  kind: s.kind,
  re: new RegExp(s.re.source, s.re.flags.replace('g', '')),
}));

/** Variables whose values are secrets by their name, whatever the job called them. */
const SECRET_NAME = /(TOKEN|SECRET|KEY|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE)/i;

/** The values of the job's secret-named variables long enough to be secrets, longest first. */
export function jobSecretValues(env: Record<string, string | undefined>): string[] {
  const out = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (!value || !SECRET_NAME.test(name)) continue;
    if (value.trim().length >= 12) out.add(value.trim());
  }
  return [...out].sort((a, b) => b.length - a.length);
}

export interface SecretFinding {
  file: string;
  /** The line in the new file, or null for a file name. */
  line: number | null;
  kind: string;
}

/** What a text holds: the kind of the first secret in it, or null. */
function secretIn(text: string, values: readonly string[]): string | null {
  if (values.some((v) => text.includes(v))) return 'a value this job was given';
  return TOKEN_SHAPES.find((s) => s.re.test(text))?.kind ?? null;
}

/** Searches a unified diff (`git diff -U0 --text`) for secrets in added lines and in file names. */
export function scanDiff(diff: string, known: readonly string[]): SecretFinding[] {
  // TR38: the values, and their encodings, reversals and pieces.
  const values = secretForms(known);
  const findings: SecretFinding[] = [];
  let file = '';
  let line = 0;
  for (const raw of diff.split('\n')) {
    if (raw.startsWith('+++ ')) {
      file = raw.slice(4).replace(/^b\//, '');
      const kind = file === '/dev/null' ? null : secretIn(file, values);
      if (kind) findings.push({ file: '(a file name)', line: null, kind });
      continue;
    }
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(raw);
    if (hunk) {
      line = Number(hunk[1]);
      continue;
    }
    if (raw.startsWith('+')) {
      const kind = secretIn(raw.slice(1), values);
      if (kind) findings.push({ file, line, kind });
      line++;
    }
  }
  return findings;
}

/** The change from `base` to `commit` in a repository, searched. */
export function scanChange(
  cwd: string,
  base: string,
  commit: string,
  values: readonly string[],
  env?: NodeJS.ProcessEnv,
): SecretFinding[] {
  const r = spawnSync(
    'git',
    [
      '-c',
      'core.quotePath=false',
      'diff',
      '--no-ext-diff',
      '--no-textconv',
      '--text',
      '--no-renames',
      '-U0',
      base,
      commit,
      '--',
    ],
    { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, ...(env ? { env } : {}) },
  );
  if (r.status !== 0) throw new Error(`git diff failed: ${(r.stderr || '').trim()}`);
  return scanDiff(r.stdout, values);
}

/** The refusal people read: where each secret is, never what it is. */
export function secretRefusal(findings: readonly SecretFinding[]): string {
  const where = findings
    .slice(0, 10)
    .map((f) => `${f.line === null ? f.file : `${f.file} line ${f.line}`} (${f.kind})`);
  const more = findings.length > 10 ? `, and ${findings.length - 10} more` : '';
  return `the agent's change holds a secret, so nothing was pushed: ${where.join('; ')}${more}. Remove it from the change (and rotate the secret if it was real), then start the work again.`;
}
