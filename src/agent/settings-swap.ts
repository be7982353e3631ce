import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { globToRegExp } from '../kernel/glob.js';

// TR23: a fix run works on a PR head the previous agent wrote, and an agent
// CLI loads its settings from the checkout: CLAUDE.md and AGENTS.md as
// instructions, .claude/settings.json's hooks, env and apiKeyHelper as
// commands it runs. Before the agent starts, those files are put back as
// the default branch has them; afterwards, the PR's own versions return
// (unless the agent changed them, which the protected paths then hold).

export const AGENT_SETTINGS: readonly string[] = [
  '**/CLAUDE.md',
  '**/CLAUDE.local.md',
  '**/AGENTS.md',
  '.claude/**',
  '.mcp.json',
  '.codex/**',
];

const git = (cwd: string, args: string[]) =>
  spawnSync('git', args, { cwd, encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 });

const listAt = (cwd: string, commit: string): string[] => {
  const r = git(cwd, ['ls-tree', '-r', '-z', '--name-only', commit]);
  if (r.status !== 0)
    throw new Error(
      `the default branch's commit ${commit.slice(0, 7)} is not in the checkout: fetch it (${r.stderr.toString().trim()})`,
    );
  return r.stdout.toString('utf8').split('\0').filter(Boolean);
};

export interface SettingsSwap {
  /** Paths whose PR-head content was set aside, with that content (null: the head had no such file). */
  setAside: Map<string, Buffer | null>;
  /** What the default branch put there (null: removed). */
  installed: Map<string, Buffer | null>;
}

/** Puts the default branch's agent settings in the checkout in place of the PR head's. */
export function installTrustedSettings(cwd: string, head: string, trusted: string): SettingsSwap {
  const res = AGENT_SETTINGS.map(globToRegExp);
  const matches = (p: string) => res.some((re) => re.test(p));
  const headFiles = listAt(cwd, head).filter(matches);
  const trustedFiles = listAt(cwd, trusted).filter(matches);
  const swap: SettingsSwap = { setAside: new Map(), installed: new Map() };
  for (const path of new Set([...headFiles, ...trustedFiles])) {
    const abs = join(cwd, path);
    const mine = existsSync(abs) ? readFileSync(abs) : null;
    const theirs = trustedFiles.includes(path) ? git(cwd, ['show', `${trusted}:${path}`]).stdout : null;
    if (mine && theirs && mine.equals(theirs)) continue;
    swap.setAside.set(path, mine);
    swap.installed.set(path, theirs);
    if (theirs) {
      mkdirSync(dirname(abs), { recursive: true });
      writeFileSync(abs, theirs);
    } else rmSync(abs, { force: true });
  }
  return swap;
}

/** Puts the PR head's versions back where the agent left the default branch's untouched. */
export function restoreSettings(cwd: string, swap: SettingsSwap): void {
  for (const [path, installed] of swap.installed) {
    const abs = join(cwd, path);
    const now = existsSync(abs) ? readFileSync(abs) : null;
    const untouched = now === null ? installed === null : installed !== null && now.equals(installed);
    if (!untouched) continue;
    const original = swap.setAside.get(path) ?? null;
    if (original) {
      mkdirSync(dirname(abs), { recursive: true });
      writeFileSync(abs, original);
    } else rmSync(abs, { force: true });
  }
}
