import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { README, ROOT, runsCommand, shellBlocks } from './helpers/readme.js';

// The README runs as written: every shell block in it is marked either with
// where it runs (`<!-- runs in: FILE, FILE -->`: each command of the block is
// in one of those files, a yoke command by its subcommand) or with why it is
// not run (`<!-- not run: why -->`). The sandbox command itself runs in
// test/http/dashboard.browser.test.ts, whose dashboard is the one it prints.

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
});
