import { spawnSync } from 'node:child_process';
import {
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  rmdirSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { AGENT_SETTINGS, ALWAYS_PROTECTED, withFolders } from '../kernel/agent-settings.js';
import { globToRegExp } from '../kernel/glob.js';

// TR23: a fix run works on a PR head the previous agent wrote, and an agent
// CLI loads its settings from the checkout: CLAUDE.md and AGENTS.md as
// instructions, .claude/settings.json's hooks, env and apiKeyHelper as
// commands it runs. Before the agent starts, those files are put back as
// the default branch has them; afterwards, the PR's own versions return
// (unless the agent changed them, which the protected paths then hold).
// TR36: the swap runs outside the sandbox, so it reads both versions from
// git's objects, never through the checkout, and follows no symlink: a
// `.claude` that links elsewhere is removed, not written through, and a
// link the PR holds is put back as the link it is.

export { AGENT_SETTINGS };

const git = (cwd: string, args: string[]) =>
  spawnSync('git', args, { cwd, encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 });

/** One entry of a tree: a file (its mode and bytes) or a symlink (mode 120000, its target as bytes). */
interface Entry {
  mode: string;
  data: Buffer;
}

const settingsRes = withFolders(AGENT_SETTINGS).map(globToRegExp);
const isSetting = (p: string) => settingsRes.some((re) => re.test(p));

/** The settings entries of a commit, by path. */
function entriesAt(cwd: string, commit: string): Map<string, Entry> {
  const r = git(cwd, ['ls-tree', '-r', '-z', '--full-tree', commit]);
  if (r.status !== 0)
    throw new Error(
      `the commit ${commit.slice(0, 7)} is not in the checkout: fetch it (${r.stderr.toString().trim()})`,
    );
  const out = new Map<string, Entry>();
  for (const line of r.stdout.toString('utf8').split('\0').filter(Boolean)) {
    const tab = line.indexOf('\t');
    const [mode = '', type, oid = ''] = line.slice(0, tab).split(' ');
    const path = line.slice(tab + 1);
    if (type !== 'blob' || !isSetting(path)) continue;
    out.set(path, { mode, data: git(cwd, ['cat-file', 'blob', oid]).stdout });
  }
  return out;
}

const same = (a: Entry | null, b: Entry | null) =>
  a === null || b === null ? a === b : a.mode === b.mode && a.data.equals(b.data);

/** What stands at a path of the checkout now, without following a link; a folder is `folder`. */
function standing(abs: string): Entry | 'folder' | null {
  let st;
  try {
    st = lstatSync(abs);
  } catch {
    return null;
  }
  if (st.isSymbolicLink()) return { mode: '120000', data: Buffer.from(readlinkSync(abs)) };
  if (st.isDirectory()) return 'folder';
  return { mode: st.mode & 0o111 ? '100755' : '100644', data: readFileSync(abs) };
}

/** Removes every symlink on the way to `path` inside the checkout, so nothing is written through one. */
function unlinkParents(cwd: string, path: string): void {
  const parts = path.split('/').slice(0, -1);
  for (let i = 1; i <= parts.length; i++) {
    const abs = join(cwd, ...parts.slice(0, i));
    const now = standing(abs);
    if (now !== null && now !== 'folder') rmSync(abs, { force: true });
  }
}

/** Puts an entry (or nothing) at a path of the checkout, never through a link. */
function place(cwd: string, path: string, entry: Entry | null): void {
  unlinkParents(cwd, path);
  const abs = join(cwd, path);
  const now = standing(abs);
  if (now === 'folder') {
    // A folder stands where a file goes: only an empty one (left by an earlier swap) gives way.
    if (readdirSync(abs).length) return;
    rmdirSync(abs);
  } else if (now !== null) rmSync(abs, { force: true });
  if (!entry) return;
  mkdirSync(dirname(abs), { recursive: true });
  if (entry.mode === '120000') symlinkSync(entry.data.toString('utf8'), abs);
  else writeFileSync(abs, entry.data, { mode: entry.mode === '100755' ? 0o755 : 0o644 });
}

export interface SettingsSwap {
  /** Paths whose PR-head entry was set aside, with that entry (null: the head had no such file). */
  setAside: Map<string, Entry | null>;
  /** What the default branch put there (null: removed). */
  installed: Map<string, Entry | null>;
}

/** Puts the default branch's agent settings in the checkout in place of the PR head's. */
export function installTrustedSettings(cwd: string, head: string, trusted: string): SettingsSwap {
  const mine = entriesAt(cwd, head);
  const theirs = entriesAt(cwd, trusted);
  const swap: SettingsSwap = { setAside: new Map(), installed: new Map() };
  // Shallowest first: a link standing for a folder goes before the folder's files are written.
  const paths = [...new Set([...mine.keys(), ...theirs.keys()])].sort(
    (a, b) => a.split('/').length - b.split('/').length,
  );
  for (const path of paths) {
    const m = mine.get(path) ?? null;
    const t = theirs.get(path) ?? null;
    if (same(m, t)) continue;
    swap.setAside.set(path, m);
    swap.installed.set(path, t);
    place(cwd, path, t);
  }
  return swap;
}

/** Puts the PR head's versions back where the agent left the default branch's untouched. */
export function restoreSettings(cwd: string, swap: SettingsSwap): void {
  // Deepest first: a folder's files go before a link may take the folder's place again.
  const paths = [...swap.installed.keys()].sort((a, b) => b.split('/').length - a.split('/').length);
  for (const path of paths) {
    const installed = swap.installed.get(path) ?? null;
    const now = standing(join(cwd, path));
    const untouched =
      now === 'folder' ? installed === null && readdirSync(join(cwd, path)).length === 0 : same(now, installed);
    if (untouched) place(cwd, path, swap.setAside.get(path) ?? null);
  }
}

/**
 * TR36: the symlinks a change puts at or under the paths yoke always protects (its own files, the agents'
 * settings). Settings are files: a link would make a later run load what it points at.
 */
export function linksAtProtectedPaths(cwd: string, base: string, commit: string, env?: NodeJS.ProcessEnv): string[] {
  const r = spawnSync(
    'git',
    ['-c', 'core.quotePath=false', 'diff', '--raw', '-z', '--no-renames', '--no-abbrev', base, commit, '--'],
    { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...(env ? { env } : {}) },
  );
  if (r.status !== 0) throw new Error(`git diff failed: ${(r.stderr || '').trim()}`);
  const res = withFolders(ALWAYS_PROTECTED).map(globToRegExp);
  const fields = r.stdout.split('\0');
  const links: string[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const newMode = fields[i]!.split(' ')[1];
    const path = fields[i + 1]!;
    if (newMode === '120000' && res.some((re) => re.test(path))) links.push(path);
  }
  return links;
}

/** The refusal people read. */
export const linkRefusal = (links: readonly string[]): string =>
  `the change puts a symbolic link at ${links.join(', ')}, where yoke's own files and the agents' settings live; yoke delivers none (settings are files, and a link would make a later run load whatever it points at)`;
