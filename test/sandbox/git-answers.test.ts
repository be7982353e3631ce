import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changedFiles, createBareRepo, git, readFileAt, readFileAtAsync, revParse } from '../../sandbox/git.js';

// The embedded forge asks git about the same commits many times; a read that names objects by full sha only is
// asked once, and every other read (one naming a branch, a write, a read that failed) each time. A `git` first on
// PATH counts the processes the forge starts.

const dir = mkdtempSync(join(tmpdir(), 'yoke-git-answers-'));
const counted = join(dir, 'counted');
const bare = join(dir, 'repo.git');
const PATH = process.env.PATH;
let first = '';

/** The git processes started while `f` ran, by their first argument. */
function started(f: () => unknown): string[] {
  writeFileSync(counted, '');
  f();
  return readFileSync(counted, 'utf8').split('\n').filter(Boolean);
}

/** Moves `branch` to a new commit on top of it that sets `file`; the new commit. */
function commit(branch: string, file: string, text: string): string {
  const parent = revParse(bare, `refs/heads/${branch}`)!;
  const blob = git(bare, ['hash-object', '-w', '--stdin'], text);
  const tree = git(bare, ['mktree'], `100644 blob ${blob}\t${file}\n`);
  const sha = git(bare, ['commit-tree', tree, '-p', parent, '-m', `set ${file}`]);
  git(bare, ['update-ref', `refs/heads/${branch}`, sha]);
  return sha;
}

beforeAll(() => {
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  writeFileSync(join(bin, 'git'), `#!/bin/sh\necho "$1" >> '${counted}'\nexec '${real}' "$@"\n`);
  chmodSync(join(bin, 'git'), 0o755);
  process.env.PATH = `${bin}:${PATH}`;
  first = createBareRepo(bare, 'main', { 'a.txt': 'one\n' }, 'first');
});
afterAll(() => {
  process.env.PATH = PATH;
  rmSync(dir, { recursive: true, force: true });
});

describe('git reads in the embedded forge', () => {
  it('a read of a commit by sha starts git once; the same read by branch starts it each time and follows the branch', () => {
    const second = commit('main', 'a.txt', 'two\n');
    expect(started(() => expect(readFileAt(bare, second, 'a.txt')).toBe('two\n'))).toEqual(['show']);
    expect(started(() => expect(readFileAt(bare, second, 'a.txt')).toBe('two\n'))).toEqual([]);
    expect(started(() => expect(git(bare, ['show', '-s', '--format=%s', second])).toBe('set a.txt'))).toEqual(['show']);
    expect(started(() => git(bare, ['show', '-s', '--format=%s', second]))).toEqual([]);
    // By branch: asked each time, and the answer moves with the branch.
    expect(started(() => expect(readFileAt(bare, 'main', 'a.txt')).toBe('two\n'))).toEqual(['show']);
    const third = commit('main', 'a.txt', 'three\n');
    expect(started(() => expect(readFileAt(bare, 'main', 'a.txt')).toBe('three\n'))).toEqual(['show']);
    expect(readFileAt(bare, third, 'a.txt')).toBe('three\n');
    expect(readFileAt(bare, first, 'a.txt')).toBe('one\n');
  });

  it('a read that failed is asked again, and a write is never taken for a read', () => {
    const head = revParse(bare, 'refs/heads/main')!;
    expect(started(() => expect(readFileAt(bare, head, 'b.txt')).toBeNull())).toEqual(['show']);
    expect(started(() => expect(readFileAt(bare, head, 'b.txt')).toBeNull())).toEqual(['show']);
    const blob = (text: string) => git(bare, ['hash-object', '-w', '--stdin'], text);
    expect(started(() => blob('x\n'))).toEqual(['hash-object']);
    expect(started(() => blob('x\n'))).toEqual(['hash-object']);
  });

  it("a PR's files are those from where its head left the base branch, and follow the base branch when it moves", () => {
    git(bare, ['update-ref', 'refs/heads/topic', revParse(bare, 'refs/heads/main')!]);
    const head = commit('topic', 'c.txt', 'c\n');
    // topic's commit replaced the tree with c.txt alone: against main it removes a.txt and adds c.txt.
    expect(changedFiles(bare, 'main', head).map((f) => `${f.status} ${f.path}`)).toEqual([
      'removed a.txt',
      'added c.txt',
    ]);
    git(bare, ['update-ref', 'refs/heads/main', head]);
    expect(changedFiles(bare, 'main', head)).toEqual([]);
  });

  it('an asynchronous read by sha is kept too, and one by branch follows it', async () => {
    const head = revParse(bare, 'refs/heads/main')!;
    writeFileSync(counted, '');
    expect(await readFileAtAsync(bare, head, 'c.txt')).toBe('c\n');
    expect(await readFileAtAsync(bare, head, 'c.txt')).toBe('c\n');
    expect(readFileSync(counted, 'utf8').split('\n').filter(Boolean)).toEqual(['show']);
    commit('main', 'c.txt', 'd\n');
    expect(await readFileAtAsync(bare, 'main', 'c.txt')).toBe('d\n');
  });
});
