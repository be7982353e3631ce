import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanChange, secretRefusal } from './secret-scan.js';
import { linkRefusal, linksAtProtectedPaths } from './settings-swap.js';

// The agent's work, taken: one commit on the run's base, made where nothing the agent planted runs, searched
// for secrets and bundled for the deliver job.

/**
 * TR18: the agent's work tree as one commit on `base`, made in a fresh git directory of the runner's own
 * (the checkout's objects borrowed read-only), so no hook, fsmonitor, filter or other setting the agent
 * planted in the checkout's .git runs; then searched for secrets (TR16) and bundled.
 */
export function snapshotWorkTree(
  cwd: string,
  base: string,
  /** The commit's message, where the bundle is written, and the job's secret values the change must not hold. */
  { message, bundle, secrets }: { message: string; bundle: string; secrets: readonly string[] },
):
  | { kind: 'unchanged' }
  | { kind: 'secret'; why: string }
  | { kind: 'refused'; why: string }
  | { kind: 'bundled'; commit: string } {
  const gitDir = mkdtempSync(join(tmpdir(), 'yoke-snapshot-'));
  const home = mkdtempSync(join(tmpdir(), 'yoke-snapshot-home-'));
  try {
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_TERMINAL_PROMPT: '0',
      GIT_DIR: gitDir,
      GIT_WORK_TREE: cwd,
    };
    const g = (args: string[]) => {
      const r = spawnSync('git', ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', ...args], {
        cwd,
        env,
        encoding: 'utf8',
        maxBuffer: 256 * 1024 * 1024,
      });
      if (r.status !== 0) throw new Error(`git ${args[0]} failed: ${(r.stderr || r.stdout).trim()}`);
      return r.stdout.trim();
    };
    const { GIT_DIR: _d, GIT_WORK_TREE: _w, ...bare } = env;
    if (spawnSync('git', ['init', '--quiet', '--bare', gitDir], { env: bare }).status !== 0)
      throw new Error('git init failed');
    writeFileSync(join(gitDir, 'objects', 'info', 'alternates'), `${join(cwd, '.git', 'objects')}\n`);
    g(['read-tree', base]);
    g(['add', '-A', '--', '.']);
    const tree = g(['write-tree']);
    if (tree === g(['rev-parse', `${base}^{tree}`])) return { kind: 'unchanged' };
    const who = {
      GIT_AUTHOR_NAME: 'yoke',
      GIT_AUTHOR_EMAIL: 'yoke@users.noreply.github.com',
      GIT_COMMITTER_NAME: 'yoke',
      GIT_COMMITTER_EMAIL: 'yoke@users.noreply.github.com',
    };
    const made = spawnSync('git', ['commit-tree', tree, '-p', base, '-F', '-'], {
      cwd,
      env: { ...env, ...who },
      input: message,
      encoding: 'utf8',
    });
    if (made.status !== 0) throw new Error(`git commit-tree failed: ${made.stderr.trim()}`);
    const commit = made.stdout.trim();
    const found = scanChange(cwd, base, commit, secrets, env);
    if (found.length) return { kind: 'secret', why: secretRefusal(found) };
    const links = linksAtProtectedPaths(cwd, base, commit, env);
    if (links.length) return { kind: 'refused', why: linkRefusal(links) };
    g(['update-ref', 'refs/heads/yoke-work', commit]);
    g(['symbolic-ref', 'HEAD', 'refs/heads/yoke-work']);
    // The deliver job takes the bundle's HEAD.
    g(['bundle', 'create', '--quiet', bundle, `${base}..HEAD`]);
    return { kind: 'bundled', commit };
  } finally {
    rmSync(gitDir, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
}
