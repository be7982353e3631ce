import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
  mkdirSync,
  readdirSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runBuffered } from './spawner.js';

// Real git repositories on disk for the embedded forge: bare repos that
// agents clone and push to, and the plumbing a merge needs.

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'yoke sandbox',
  GIT_AUTHOR_EMAIL: 'sandbox@yoke.invalid',
  GIT_COMMITTER_NAME: 'yoke sandbox',
  GIT_COMMITTER_EMAIL: 'sandbox@yoke.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
};

export function git(cwd: string, args: string[], input?: string): string {
  const run = () =>
    execFileSync('git', args, {
      cwd,
      input,
      env: { ...process.env, ...GIT_ENV },
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'pipe'],
    }).trim();
  return input === undefined ? remembered(cwd, args, run) : run();
}

/** The reads whose answer about objects named by full sha never changes, for git's objects never do. */
const OBJECT_READS = new Set(['show', 'rev-parse', 'merge-base', 'diff', 'ls-tree', 'cat-file', 'rev-list']);
/** An object named by full sha: a commit, a range of two, a commit's `^{commit}`, or a file at a commit. */
const OBJECT_NAME = /^[0-9a-f]{40}(?:\.\.[0-9a-f]{40}|\^\{commit\}|:[^\0]+)?$/;
const answers = new Map<string, string>();
const ANSWERS_KEPT = 20_000;

/**
 * A read of objects named by full sha only is asked of git once per repository, and its answer kept: the forge's
 * handlers ask the same commit's message, tree, files and ancestry many times, and each git process a test's
 * worker starts is a fork of a large process. A read naming a branch, a write, or a read that failed is asked anew.
 */
function remembered(cwd: string, args: readonly string[], run: () => string): string {
  const end = args.indexOf('--');
  const named = (end < 0 ? args : args.slice(0, end)).slice(1).filter((a) => !a.startsWith('-'));
  if (!OBJECT_READS.has(args[0]!) || !named.length || !named.every((a) => OBJECT_NAME.test(a))) return run();
  const key = answerKey(cwd, args);
  return answers.get(key) ?? keep(key, run());
}

const answerKey = (cwd: string, args: readonly string[]) => `${cwd}\0${args.join('\0')}`;

function keep(key: string, answer: string): string {
  if (answers.size >= ANSWERS_KEPT) answers.clear();
  answers.set(key, answer);
  return answer;
}

/** The files of commits the forge seeded itself, by sha: a sha names one tree in any repository (copies included), so reads of them need no git process. */
const seeded = new Map<string, Readonly<Record<string, string>>>();

/** Creates a bare repository whose default branch holds `files`. */
export function createBareRepo(path: string, branch: string, files: Record<string, string>, message: string): string {
  mkdirSync(path, { recursive: true });
  git(path, ['init', '--bare', '--quiet', `--initial-branch=${branch}`]);
  const work = mkdtempSync(join(tmpdir(), 'yoke-seed-'));
  try {
    git(work, ['init', '--quiet', `--initial-branch=${branch}`]);
    for (const [file, content] of Object.entries(files)) {
      mkdirSync(dirname(join(work, file)), { recursive: true });
      writeFileSync(join(work, file), content);
    }
    git(work, ['add', '-A']);
    git(work, ['commit', '--quiet', '-m', message]);
    git(work, ['push', '--quiet', path, `HEAD:refs/heads/${branch}`]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const sha = revParse(path, `refs/heads/${branch}`)!;
  seeded.set(sha, { ...files });
  return sha;
}

/** Writes bytes into a repository as a blob; its sha. */
export function hashObject(gitDir: string, data: Buffer): string {
  return execFileSync('git', ['hash-object', '-w', '--stdin'], {
    cwd: gitDir,
    input: data,
    env: { ...process.env, ...GIT_ENV },
  })
    .toString('utf8')
    .trim();
}

/** The commit a branch points at, or null. Reads the loose ref first: cheap enough for every request. */
export function revParse(gitDir: string, ref: string): string | null {
  const loose = join(gitDir, ref);
  if (existsSync(loose)) return readFileSync(loose, 'utf8').trim();
  try {
    return git(gitDir, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  } catch {
    return null;
  }
}

export function readFileAt(gitDir: string, ref: string, path: string): string | null {
  try {
    return remembered(gitDir, ['show', `${ref}:${path}`], () =>
      execFileSync('git', ['show', `${ref}:${path}`], {
        cwd: gitDir,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }),
    );
  } catch {
    return null;
  }
}

/** As readFileAt, without holding the event loop while git runs: the contents route serves a whole fleet's reads at once. */
export function readFileAtAsync(gitDir: string, ref: string, path: string): Promise<string | null> {
  const sha = /^[0-9a-f]{40}$/.test(ref)
    ? ref
    : existsSync(join(gitDir, 'refs/heads', ref))
      ? revParse(gitDir, `refs/heads/${ref}`)
      : null;
  const files = sha ? seeded.get(sha) : undefined;
  if (files) return Promise.resolve(files[path] ?? null);
  const key = sha ? answerKey(gitDir, ['show', `${sha}:${path}`]) : null;
  const known = key ? answers.get(key) : undefined;
  if (known !== undefined) return Promise.resolve(known);
  return runBuffered({ file: 'git', args: ['show', `${sha ?? ref}:${path}`], env: process.env, cwd: gitDir }).then(
    ({ code, stdout }) => {
      if (code !== 0) return null;
      const text = stdout.toString('utf8');
      return key ? keep(key, text) : text;
    },
  );
}

export type MergeOutcome = { ok: true; sha: string } | { ok: false; reason: string };

/** Squash-merges `head` onto `base` in a bare repository, as GitHub's squash merge does. */
export function squashMerge(gitDir: string, base: string, headSha: string, message: string): MergeOutcome {
  const baseSha = revParse(gitDir, `refs/heads/${base}`);
  if (!baseSha) return { ok: false, reason: `base branch ${base} does not exist` };
  let tree: string;
  try {
    tree = git(gitDir, ['merge-tree', '--write-tree', baseSha, headSha]).split('\n')[0]!;
  } catch {
    return { ok: false, reason: 'Merge conflict' };
  }
  const commit = git(gitDir, ['commit-tree', tree, '-p', baseSha, '-m', message]);
  git(gitDir, ['update-ref', `refs/heads/${base}`, commit, baseSha]);
  return { ok: true, sha: commit };
}

export interface ChangedFile {
  path: string;
  /** Where a rename came from. */
  previous: string | null;
  status: 'added' | 'removed' | 'modified' | 'renamed';
  blob: string;
}

/** What a PR changes, as GitHub's files listing has it: the diff from the merge base of `base` and `head` to `head`. */
export function changedFiles(gitDir: string, base: string, head: string): ChangedFile[] {
  const from = git(gitDir, ['merge-base', revParse(gitDir, `refs/heads/${base}`) ?? `refs/heads/${base}`, head]);
  const out = git(gitDir, ['diff', '--raw', '-z', '-M', '--no-abbrev', from, head, '--']);
  const parts = out ? out.split('\0') : [];
  if (parts.at(-1) === '') parts.pop();
  const files: ChangedFile[] = [];
  for (let i = 0; i < parts.length;) {
    const meta = parts[i++]!.replace(/^:/, '').split(' ');
    const code = meta[4] ?? 'M';
    const blob = meta[3] ?? '';
    if (code.startsWith('R') || code.startsWith('C')) {
      const previous = parts[i++]!;
      files.push({ path: parts[i++]!, previous, status: 'renamed', blob });
    } else {
      files.push({
        path: parts[i++]!,
        previous: null,
        status: code === 'A' ? 'added' : code === 'D' ? 'removed' : 'modified',
        blob,
      });
    }
  }
  return files.filter((f) => f.path);
}

/**
 * GitHub's `diff_hunk` of an inline review comment: the hunk of the PR's diff
 * (from its merge base) that holds `line` of the head's `path`, from its
 * header through that line; null when the line is not in the diff.
 */
export function diffHunkAt(gitDir: string, base: string, head: string, path: string, line: number): string | null {
  const from = git(gitDir, ['merge-base', revParse(gitDir, `refs/heads/${base}`) ?? `refs/heads/${base}`, head]);
  const diff = git(gitDir, ['diff', from, head, '--', path]);
  let hunk: string[] | null = null;
  let at = 0;
  for (const text of diff.split('\n')) {
    const header = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(text);
    if (header) {
      hunk = [text];
      at = Number(header[1]) - 1;
      continue;
    }
    if (!hunk) continue;
    hunk.push(text);
    if (!text.startsWith('-')) at++;
    if (at === line && !text.startsWith('-')) return hunk.join('\n');
  }
  return null;
}

/** Whether commit `a` is `b` or comes before it. */
export function isAncestor(gitDir: string, a: string, b: string): boolean {
  try {
    git(gitDir, ['merge-base', '--is-ancestor', a, b]);
    return true;
  } catch {
    return false;
  }
}

/** When a branch of the repository last moved (a push, a merge, a ref update), by the refs' files: GitHub's `pushed_at`. */
export function lastPushedAt(gitDir: string): number | null {
  let newest: number | null = null;
  const see = (path: string) => {
    try {
      const st = statSync(path);
      if (st.isDirectory()) for (const name of readdirSync(path)) see(join(path, name));
      else newest = Math.max(newest ?? 0, st.mtimeMs);
    } catch {
      // A ref being written (its lock file renamed away meanwhile) is seen by the next listing.
    }
  };
  see(join(gitDir, 'packed-refs'));
  see(join(gitDir, 'refs', 'heads'));
  return newest;
}
