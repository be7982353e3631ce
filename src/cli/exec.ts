import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHILD_ENV_ALLOWLIST } from '../launcher/command.js';
import { redactSecrets, secretValues, SECRET_VARIABLES } from '../redact.js';
import type { CliIo, ExecResult } from './client.js';

// How the CLI runs a QA case or a deploy command: `sh -c` in the current
// directory, output (stdout and stderr together) kept for the evidence. The
// command is the repository's (a merged PR can change it), so it gets what
// the launcher gives a run (TR06): the allowlist and the run facts, never the
// operator token, the app key or the database; and its output has secrets
// taken out before it becomes evidence.

const OUTPUT_LIMIT = 16_000;

/** Variables that never cross to a repository's command, whatever YOKE_PASS_ENV says. */
const NEVER_PASSED = new Set(['YOKE_TOKEN', 'YOKE_API_TOKENS', 'PRIVATE_KEY', 'PRIVATE_KEY_PATH', 'WEBHOOK_SECRET', 'YOKE_DATABASE_URL', 'YOKE_DB_PATH', 'YOKE_URL']);

/**
 * A repository command's environment: the allowlist of yoke's own, the
 * variables the operator names in YOKE_PASS_ENV (a deploy's KUBECONFIG, say),
 * and the run facts.
 */
export function commandEnv(parent: Record<string, string | undefined>, facts: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  const passed = (parent.YOKE_PASS_ENV ?? '').split(',').map((n) => n.trim()).filter((n) => n && !NEVER_PASSED.has(n));
  for (const name of [...CHILD_ENV_ALLOWLIST, ...passed]) if (parent[name] !== undefined) env[name] = parent[name]!;
  return { ...env, ...facts };
}

export function nodeExec(command: string, env: Record<string, string>, cwd = process.cwd(), parent: Record<string, string | undefined> = process.env): Promise<ExecResult> {
  const known = secretValues(parent, SECRET_VARIABLES);
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', command], { cwd, env: commandEnv(parent, env), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-OUTPUT_LIMIT);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (err) => resolve({ code: null, output: redactSecrets(output, known), error: err.message }));
    child.on('close', (code) => resolve({ code, output: redactSecrets(output, known) }));
  });
}

export function nodeHead(cwd = process.cwd()): string | null {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

export const nodeReadFile = (path: string): string => readFileSync(path, 'utf8');

/** The CLI as someone runs it in a checkout: commands run there, evidence files are read from there. */
export function checkoutIo(dir: string, env: CliIo['env'], out: CliIo['out'], err: CliIo['err']): CliIo {
  return {
    out,
    err,
    env,
    fetch,
    // As in a person's shell: what the CLI was started with is what its commands may be passed (YOKE_PASS_ENV).
    exec: (command, more) => nodeExec(command, more, dir, { ...process.env, ...env }),
    head: () => nodeHead(dir),
    readFile: (p) => readFileSync(join(dir, p), 'utf8'),
  };
}
