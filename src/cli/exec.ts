import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CliIo, ExecResult } from './client.js';

// How the CLI runs a QA case or a deploy command: `sh -c` in the current
// directory, output (stdout and stderr together) kept for the evidence.

const OUTPUT_LIMIT = 16_000;

export function nodeExec(command: string, env: Record<string, string>, cwd = process.cwd()): Promise<ExecResult> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', command], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-OUTPUT_LIMIT);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (err) => resolve({ code: null, output, error: err.message }));
    child.on('close', (code) => resolve({ code, output }));
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
    exec: (command, more) => nodeExec(command, more, dir),
    head: () => nodeHead(dir),
    readFile: (p) => readFileSync(join(dir, p), 'utf8'),
  };
}
