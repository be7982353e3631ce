import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

// `yoke config check` as a maintainer runs it before a push: the real CLI as a
// child process, on a checkout's files, whole output compared.

const BIN = resolve(import.meta.dirname, '../../bin/yoke.js');
let dir: string | null = null;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

function checkout(files: Record<string, string>): string {
  dir = mkdtempSync(join(tmpdir(), 'yoke-config-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

function yoke(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('close', (code) => done({ code, out: out.trimEnd(), err: err.trimEnd() }));
  });
}

const GOOD = {
  '.github/yoke.yml':
    'prefix: APP\nautoland:\n  enabled: true\nfix_forward:\n  enabled: true\n  max_attempts: 2\ndelivery:\n  stages:\n    - { name: staging, kind: deploy, command: ./deploy.sh staging }\n    - { name: staging-qa, kind: qa }\n',
  '.github/yoke/qa/smoke.yml': 'name: smoke\ncases:\n  - { id: health, title: Health, run: ./qa/health.sh }\n',
};

describe('yoke config check', () => {
  it('passes a good checkout, naming each file it read', async () => {
    const r = await yoke(['config', 'check', checkout(GOOD)]);
    expect(r).toEqual({
      code: 0,
      out: 'ok: .github/yoke.yml is valid\nok: .github/yoke/qa/smoke.yml: plan smoke (smoke) is valid, 1 case(s)',
      err: '',
    });
  });

  it('refuses the bad opt-in file a newcomer wrote, naming each field, with did-you-mean, and exits 1', async () => {
    const bad = {
      ...GOOD,
      '.github/yoke.yml': 'auto: sometimes\nautolnad:\n  enabled: true\nfix_forward:\n  max_attempts: two\n',
    };
    const r = await yoke(['config', 'check', checkout(bad)]);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toBe(
      [
        'refused: .github/yoke.yml is not valid: auto: Invalid input: expected boolean, received string; fix_forward.max_attempts: Invalid input: expected number, received string; .github/yoke.yml: "autolnad" is not a setting here; did you mean "autoland"?',
        'yoke would refuse this file: fix the fields named above and run `yoke config check` again.',
      ].join('\n'),
    );
  });

  it('refuses a QA plan that does not parse and a delivery typo, and says where', async () => {
    const bad = {
      ...GOOD,
      '.github/yoke.yml': GOOD['.github/yoke.yml'].replace('  stages:', '  stearing: maint\n  stages:'),
      '.github/yoke/qa/broken.yml': 'name: broken\ncases:\n  - { id: health, titel: Health, run: ./qa/health.sh }\n',
    };
    const r = await yoke(['config', 'check', checkout(bad)]);
    expect([r.code, r.out]).toEqual([1, '']);
    expect(r.err).toBe(
      [
        'refused: delivery is refused: delivery: "stearing" is not a setting here; did you mean "steering"?',
        'yoke would refuse this file: fix the fields named above and run `yoke config check` again.',
      ].join('\n'),
    );
    const plan = await yoke([
      'config',
      'check',
      checkout({ ...GOOD, '.github/yoke/qa/broken.yml': bad['.github/yoke/qa/broken.yml'] }),
    ]);
    expect([plan.code, plan.out]).toEqual([
      1,
      'ok: .github/yoke.yml is valid\nok: .github/yoke/qa/smoke.yml: plan smoke (smoke) is valid, 1 case(s)',
    ]);
    const two = await yoke([
      'config',
      'check',
      checkout({
        ...GOOD,
        '.github/yoke/qa/broken.yml': bad['.github/yoke/qa/broken.yml'],
        '.github/yoke/qa/worse.yml': 'name: worse\n',
      }),
    ]);
    expect(two.err.split('\n').at(-1)).toBe(
      'yoke would refuse these 2 files: fix the fields named above and run `yoke config check` again.',
    );
    expect(plan.err.split('\n')[0]).toBe(
      'refused: .github/yoke/qa/broken.yml.cases[0].title: Invalid input: expected string, received undefined; .github/yoke/qa/broken.yml.cases[0]: "titel" is not a setting here; did you mean "title"?',
    );
  });

  it('says so when the folder has no opt-in file, or is not a folder', async () => {
    expect(await yoke(['config', 'check', checkout({})])).toMatchObject({
      code: 1,
      err: 'refused: .github/yoke.yml is not here: this checkout has not opted in to yoke (see the README for its fields)\nyoke would refuse this file: fix the fields named above and run `yoke config check` again.',
    });
    expect(await yoke(['config', 'check', '/nonexistent/place'])).toMatchObject({
      code: 1,
      err: '/nonexistent/place is not a folder. Name the checkout to check, e.g. `yoke config check .`',
    });
  });
});
