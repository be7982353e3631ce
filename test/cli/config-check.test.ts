import { TEST_CLI } from '../helpers/bundles-global.js';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

// `yoke config check` as a maintainer runs it before a push: the real CLI as a
// child process, on a checkout's files, whole output compared.

// The CLI as one module, built once for the run (test/helpers/bundles-global.ts).
const BIN = TEST_CLI;
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
    'prefix: APP\nautoland:\n  enabled: true\nfix_forward:\n  enabled: true\n  max_attempts: 2\ndelivery:\n  stages:\n    - { name: staging, kind: deploy, command: ./deploy.sh staging }\n    - { name: staging-qa, kind: qa }\n  run_plans: [smoke]\n',
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
        'yoke would refuse this file: fix what is named above and run `yoke config check` again.',
      ].join('\n'),
    );
  });

  it('shows the line a YAML error is on, says an empty file takes every default, and names text that is no mapping', async () => {
    const broken = await yoke([
      'config',
      'check',
      checkout({ '.github/yoke.yml': 'auto: true\nfoo: [1, 2\nbar: 3\n' }),
    ]);
    expect(broken).toEqual({
      code: 1,
      out: '',
      err: [
        'refused: .github/yoke.yml is not YAML: Flow sequence in block collection must be sufficiently indented and end with a ] at line 3, column 1',
        '    3 | bar: 3',
        '      | ^',
        'yoke would refuse this file: fix what is named above and run `yoke config check` again.',
      ].join('\n'),
    });
    expect(await yoke(['config', 'check', checkout({ '.github/yoke.yml': '' })])).toEqual({
      code: 0,
      out: 'ok: .github/yoke.yml is valid (it is empty: every field takes its default, as docs/configuration.md lists them)',
      err: '',
    });
    const binary = await yoke(['config', 'check', checkout({ '.github/yoke.yml': 'PK\u0003\u0004 zipped' })]);
    expect(binary.err.split('\n')[0]).toBe(
      'refused: .github/yoke.yml must be a YAML mapping of settings (`key: value` lines), not text ("PK\\u0003\\u0004 zipped")',
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
        'yoke would refuse this file: fix what is named above and run `yoke config check` again.',
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
      'yoke would refuse these 2 files: fix what is named above and run `yoke config check` again.',
    );
    expect(plan.err.split('\n')[0]).toBe(
      'refused: .github/yoke/qa/broken.yml.cases[0]: "titel" is not a setting here; did you mean "title"?',
    );
  });

  it('refuses a run-level plan that is not in the plans folder, with did-you-mean, as a stage entry would, and never calls the file valid', async () => {
    const r = await yoke([
      'config',
      'check',
      checkout({ ...GOOD, '.github/yoke.yml': GOOD['.github/yoke.yml'].replace('[smoke]', '[smok]') }),
    ]);
    expect(r).toEqual({
      code: 1,
      out: 'ok: .github/yoke/qa/smoke.yml: plan smoke (smoke) is valid, 1 case(s)',
      err: [
        'refused: delivery is refused: delivery.run_plans: the run-level plan "smok" is not in .github/yoke/qa/; did you mean "smoke"?',
        'yoke would refuse this file: fix what is named above and run `yoke config check` again.',
      ].join('\n'),
    });
  });

  it('notes a QA stage that checks nothing unless a member attaches a plan, and passes it', async () => {
    const r = await yoke([
      'config',
      'check',
      checkout({ ...GOOD, '.github/yoke.yml': GOOD['.github/yoke.yml'].replace('  run_plans: [smoke]\n', '') }),
    ]);
    expect(r).toEqual({
      code: 0,
      out: [
        'ok: .github/yoke.yml is valid',
        'note: stage staging-qa checks only the plans its members attach (label qa:PLAN); a deployment run in which none does stops there (qa_stage_empty). List a plan in delivery.run_plans, or say allow_empty: true on the stage if it may pass with nothing checked (allow_empty: false if stopping there is what you want).',
        'ok: .github/yoke/qa/smoke.yml: plan smoke (smoke) is valid, 1 case(s)',
      ].join('\n'),
      err: '',
    });
    const allowed = await yoke([
      'config',
      'check',
      checkout({
        ...GOOD,
        '.github/yoke.yml': GOOD['.github/yoke.yml']
          .replace('  run_plans: [smoke]\n', '')
          .replace('kind: qa }', 'kind: qa, allow_empty: true }'),
      }),
    ]);
    expect(allowed.out.split('\n')).toEqual([
      'ok: .github/yoke.yml is valid',
      'ok: .github/yoke/qa/smoke.yml: plan smoke (smoke) is valid, 1 case(s)',
    ]);
  });

  it('gives did-you-mean for a stage kind, an allowed value and a plan key, and says what a deploy stage lacks', async () => {
    const r = await yoke([
      'config',
      'check',
      checkout({
        ...GOOD,
        '.github/yoke.yml':
          'delivery:\n  stages:\n    - { name: staging, kind: deploi, command: ./deploy.sh }\n    - { name: prod, kind: deploy }\n  deployments:\n    unruled_environments: rejct\n',
        '.github/yoke/qa/smoke.yml': 'nmae: smoke\ncases:\n  - { id: health, title: Health, run: ./qa/health.sh }\n',
      }),
    ]);
    expect(r.err).toBe(
      [
        'refused: delivery is refused: delivery.stages[0].kind: "deploi" is not one of "deploy", "qa"; did you mean "deploy"?; delivery.stages[1].command: a deploy stage needs what deploys: `command:` (run where the driver is, e.g. ./deploy.sh staging) or `workflow:` (a file under .github/workflows/, e.g. deploy.yml); delivery.deployments.unruled_environments: "rejct" is not one of "reject", "approve", "ignore"; did you mean "reject"?',
        'yoke would refuse this file: fix what is named above and run `yoke config check` again.',
      ].join('\n'),
    );
    const plan = await yoke([
      'config',
      'check',
      checkout({
        ...GOOD,
        '.github/yoke/qa/smoke.yml': 'nmae: smoke\ncases:\n  - { id: health, title: Health, run: ./qa/health.sh }\n',
      }),
    ]);
    expect(plan.err.split('\n')[0]).toBe(
      'refused: .github/yoke/qa/smoke.yml: "nmae" is not a setting here; did you mean "name"?',
    );
    const missing = await yoke([
      'config',
      'check',
      checkout({
        ...GOOD,
        '.github/yoke/qa/smoke.yml': 'cases:\n  - { id: health, title: Health, run: ./qa/health.sh }\n',
      }),
    ]);
    expect(missing.err.split('\n')[0]).toBe(
      'refused: .github/yoke/qa/smoke.yml.name: missing: this setting is required (string)',
    );
  });

  it('says so when the folder has no opt-in file, or is not a folder', async () => {
    expect(await yoke(['config', 'check', checkout({})])).toMatchObject({
      code: 1,
      err: 'refused: .github/yoke.yml is not here: this checkout has not opted in to yoke (`yoke init --agent claude-code` writes one; docs/configuration.md lists its fields)\nyoke would refuse this file: fix what is named above and run `yoke config check` again.',
    });
    expect(await yoke(['config', 'check', '/nonexistent/place'])).toMatchObject({
      code: 1,
      err: '/nonexistent/place is not a folder. Name the checkout to check, e.g. `yoke config check .`',
    });
  });
});
