import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The README runs as written: every shell block in it is marked either with
// where it runs (`<!-- runs in: FILE, FILE -->`: each command of the block is
// in one of those files, a yoke command by its subcommand) or with why it is
// not run (`<!-- not run: why -->`). The sandbox command itself runs here.

const ROOT = resolve(import.meta.dirname, '..');
const README = readFileSync(resolve(ROOT, 'README.md'), 'utf8');

export interface ShellBlock {
  marker: { runsIn: string[] } | { notRun: string } | null;
  commands: string[];
}

/** The README's ```sh blocks, each with the marker on the line before it and its commands (comments and exports left out). */
export function shellBlocks(text: string): ShellBlock[] {
  return [...text.matchAll(/(?:<!-- (runs in|not run): ([^\n]*?) -->\n)?```sh\n([\s\S]*?)```/g)].map((m) => ({
    marker: !m[1] ? null : m[1] === 'runs in' ? { runsIn: m[2]!.split(',').map((f) => f.trim()) } : { notRun: m[2]! },
    commands: m[3]!
      .split('\n')
      .map((l) => l.replace(/\s+#.*$/, '').trim())
      .filter((l) => l && !l.startsWith('#') && !l.startsWith('export '))
      .flatMap((l) => l.split('&&').map((c) => c.trim())),
  }));
}

/** Whether a file runs a command: a yoke command by its subcommand (`'doctor'`), anything else as written. */
export function runsCommand(fileText: string, command: string): boolean {
  const words = command.split(/\s+/);
  if (words[0] === 'yoke') return fileText.includes(`'${words[1]}'`) || fileText.includes(`yoke ${words[1]}`);
  return fileText.includes(command);
}

describe('the README, as a newcomer copies it', () => {
  const blocks = shellBlocks(README);

  it('marks every shell block with where it runs, or why it does not', () => {
    expect(blocks.length).toBeGreaterThan(0);
    expect(blocks.filter((b) => b.marker === null).map((b) => b.commands.join(' && '))).toEqual([]);
  });

  it('runs each command of a block marked "runs in" in one of the files it names', () => {
    const unrun: string[] = [];
    for (const b of blocks) {
      if (!b.marker || !('runsIn' in b.marker)) continue;
      const files = b.marker.runsIn.map((f) => {
        expect(existsSync(resolve(ROOT, f)), `${f} is not there`).toBe(true);
        return readFileSync(resolve(ROOT, f), 'utf8');
      });
      for (const c of b.commands) if (!files.some((t) => runsCommand(t, c))) unrun.push(c);
    }
    expect(unrun).toEqual([]);
  });

  it('catches a block with no marker, and a command no named file runs (the checks themselves can fail)', () => {
    expect(shellBlocks('```sh\nyoke nope\n```\n')).toEqual([{ marker: null, commands: ['yoke nope'] }]);
    expect(runsCommand("run('yoke', ['doctor', repo])", 'yoke doctor OWNER/REPO')).toBe(true);
    expect(runsCommand("run('yoke', ['doctor', repo])", 'yoke plan OWNER/REPO')).toBe(false);
    expect(runsCommand('npm ci --no-audit\nnpm test', 'npm run sandbox')).toBe(false);
  });

  /** The demo's story as the README and docs/sandbox.md tell it, each sentence with what the end table must show for it. */
  const DEMO_STORY: { page: string; says: string; shows: RegExp }[] = [
    {
      page: 'docs/sandbox.md',
      says: 'For #3 its first attempt breaks the test, so the lander rejects it and a fix run repairs it.',
      shows:
        /^#3 .*: merged as .*\n {3}runs {7}afk_auto:success lander:rejected fix\[lander rejection\]:success lander:accepted$/m,
    },
    {
      page: 'docs/sandbox.md',
      says: "#2 lands first; #5 is judged on a base that already holds #2's migration and rejected (two migrations 002); its fix renumbers its migration to 003, a lander accepts it on the new base, and it lands",
      shows:
        /^#2 .*: merged as .*\n {3}runs {7}afk_auto:success lander:accepted\n(?:.*\n)*?#5 .*: merged as .*\n {3}runs {7}afk_auto:success (?:lander:accepted )?lander:rejected fix\[lander rejection\]:success lander:accepted$/m,
    },
    {
      page: 'README.md',
      says: "(#3 and #5 are rejected and fixed first, and #4 gets a maintainer's review fixed)",
      shows: /^#4 .*\n {3}runs {7}afk_auto:success lander:accepted fix\[review by @maintainer\]:success/m,
    },
  ];

  const SANDBOX = 'npm run sandbox';
  it(`${SANDBOX}, as the README's first command says: every demo issue merged, delivered and closed out`, async () => {
    expect(blocks[0]!.commands).toContain(SANDBOX);
    const { code, out } = await new Promise<{ code: number | null; out: string }>((done) => {
      const child = spawn('sh', ['-c', SANDBOX], {
        cwd: ROOT,
        env: { ...process.env, npm_config_update_notifier: 'false' },
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (out += c.toString()));
      child.on('close', (code) => done({ code, out }));
    });
    expect(code, out).toBe(0);
    expect(out).toMatch(/^5 of 5 issues merged, 5 delivered and closed out in [\d.]+s\.$/m);
    // TR33: the end table shows the maintainer's change request on #4 as the fix it started.
    expect(out).toMatch(
      /^#4 Add a title-case helper: merged as #\d+ → \w{7}\n {3}runs {7}afk_auto:success lander:accepted fix\[review by @maintainer\]:success lander:accepted$/m,
    );
    // What the README and docs/sandbox.md tell of the demo is what its end table shows, sentence by sentence.
    for (const { page, says, shows } of DEMO_STORY) {
      expect(readFileSync(join(ROOT, page), 'utf8').replace(/\s+/g, ' '), `${page} says`).toContain(says);
      expect(out, `the end table shows: ${says}`).toMatch(shows);
    }
    // The end table fits 100 columns.
    const table = out.slice(out.indexOf('\n#1 '), out.search(/^5 of 5 issues merged/m));
    expect(table.split('\n').filter((l) => l.length > 100)).toEqual([]);
  }, 180_000);
});
