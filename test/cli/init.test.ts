import { TEST_CLI } from '../helpers/bundles-global.js';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseDeliverySettings } from '../../src/config/delivery.js';
import { parseRepoConfig } from '../../src/config/repo-config.js';
import { parse } from 'yaml';
import { LANDINGS, landerRuleset } from '../../src/config/landing.js';
import { createRequire } from 'node:module';

// `yoke init` as a maintainer meets it: the CLI as a child process, in fresh
// checkouts of each kind of project, run twice, offline.

// The CLI as one module, built once for the run (test/helpers/bundles-global.ts).
const YOKE = TEST_CLI;
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function checkout(files: Record<string, string>): string {
  const d = mkdtempSync(join(tmpdir(), 'yoke-init-'));
  dirs.push(d);
  spawnSync('git', ['init', '-q'], { cwd: d });
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(join(d, p, '..'), { recursive: true });
    writeFileSync(join(d, p), text);
  }
  return d;
}

function init(cwd: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [YOKE, 'init', ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
  });
  return { code: r.status, out: r.stdout.trim(), err: r.stderr.trim() };
}

const NEXT = (secret: string) => `Next:
1. Add the repository secret ${secret}: Settings → Secrets and variables → Actions.
2. Install yoke's GitHub App on the repository. With YOKE_RUNS_REACH=github its runs need no URL of yoke's (they hand results back through GitHub); otherwise GitHub's runners must reach it at YOKE_PUBLIC_URL.
3. No repository setting needs switching on: yoke opens the claim PR itself, so "Allow GitHub Actions to create and approve pull requests" can stay off, and your CI runs on the PR.
4. Protect the default branch (Settings → Rules → Rulesets, or branch protection): require the status check yoke/lander, and leave yoke's app off the bypass list, so nothing merges that its lander did not accept at that head. As a ruleset:
   gh api repos/OWNER/REPO/rulesets --input - <<'JSON'
   {"name":"yoke: require yoke/lander","target":"branch","enforcement":"active","bypass_actors":[],"conditions":{"ref_name":{"include":["~DEFAULT_BRANCH"],"exclude":[]}},"rules":[{"type":"required_status_checks","parameters":{"strict_required_status_checks_policy":false,"required_status_checks":[{"context":"yoke/lander","integration_id":APP_ID}]}}]}
   JSON
   Replace APP_ID with yoke's App ID (its app settings page, or yoke init --app-id N): the check then counts only from yoke's app, not from any workflow or person who can post a status.
   Landing through the PR (the default): yoke merges each accepted PR by its merge_method, after reading the base again.
   The other ways: yoke init --landing fast-forward or queue prints theirs; docs/landing.md says when each fits.
5. Commit and push these files to the default branch, then label an issue yoke:afk.`;

const SWITCHED_ON = `What .github/yoke.yml switches on:
- auto: yoke starts an AFK run for each issue labelled yoke:afk on its own, within the cap. Set auto: false to start runs only with \`/yoke start\`.
- autoland: a PR yoke's lander accepts merges unattended at the head it validated, except one that changes a protected path (.github/**, the agents' settings, protected_paths), which waits for a writer's approval. Set autoland.enabled: false to merge by hand.
- fix_forward: a rejected PR gets up to 2 fix runs. Set fix_forward.enabled: false to fix by hand.
- agent: at most 60 turns and $5 a run; its tools reach the model's endpoint and nothing else, until you list hosts in agent.network.allow.`;

const VENV = '\${RUNNER_TEMP:-/tmp}/yoke-venv';

const KINDS: [string, Record<string, string>, string[]][] = [
  ['npm', { 'package.json': '{"scripts":{"test":"vitest run"}}', 'package-lock.json': '{}' }, ['npm ci', 'npm test']],
  [
    'pytest',
    { 'pyproject.toml': '[project]\nname = "x"\n' },
    [
      `python3 -m venv --system-site-packages "${VENV}"`,
      `. "${VENV}/bin/activate"`,
      'python -m pip install -e .',
      'python -m pytest --version >/dev/null 2>&1 || python -m pip install pytest==8.3.5',
      'python -m pytest',
    ],
  ],
  ['go', { 'go.mod': 'module x\n' }, ['go test ./...']],
  ['cargo', { 'Cargo.toml': '[package]\nname = "x"\n' }, ['cargo test']],
  ['make', { Makefile: 'build:\n\ttrue\ntest:\n\ttrue\n' }, ['make test']],
];

describe('yoke init', () => {
  it("TR14 TR43 the ruleset it prints is one GitHub takes: the request body of POST /repos/{owner}/{repo}/rulesets, requiring yoke/lander from yoke's app only, bypassed by nobody", async () => {
    const doc = createRequire(import.meta.url)('@octokit/openapi/generated/api.github.com.json') as {
      paths: Record<string, any>;
      components: { schemas: Record<string, any> };
    };
    const body = doc.paths['/repos/{owner}/{repo}/rulesets'].post.requestBody.content['application/json'].schema;
    const ruleset = JSON.parse(landerRuleset(123456)) as Record<string, any>;
    expect(Object.keys(ruleset).every((k) => k in body.properties)).toBe(true);
    for (const k of body.required) expect(ruleset).toHaveProperty(k);
    expect(body.properties.target.enum).toContain(ruleset.target);
    expect(doc.components.schemas['repository-rule-enforcement'].enum).toContain(ruleset.enforcement);
    const check = doc.components.schemas['repository-rule-required-status-checks'];
    expect(check.properties.type.enum).toEqual([ruleset.rules[0].type]);
    for (const k of check.properties.parameters.required) expect(ruleset.rules[0].parameters).toHaveProperty(k);
    // TR43: the check counts only from yoke's app: a `yoke/lander` status a writer or a workflow posts satisfies nothing.
    expect(ruleset.rules[0].parameters.required_status_checks).toEqual([
      { context: 'yoke/lander', integration_id: 123456 },
    ]);
    const item = doc.components.schemas['repository-rule-params-status-check-configuration'];
    expect(item.properties.integration_id.type).toBe('integer');
    expect(Object.keys(ruleset.rules[0].parameters.required_status_checks[0]).sort()).toEqual(
      Object.keys(item.properties).sort(),
    );
    expect(ruleset.bypass_actors).toEqual([]);
  });

  it.each(LANDINGS)(
    "LD04 TR43 the ruleset `yoke init --landing %s` prints is one GitHub takes, and requires yoke/lander from yoke's app",
    (landing) => {
      const doc = createRequire(import.meta.url)('@octokit/openapi/generated/api.github.com.json') as {
        components: { schemas: Record<string, any> };
      };
      const ruleset = JSON.parse(landerRuleset(777, landing)) as { rules: { type: string; parameters: any }[] };
      const byType = (t: string) =>
        Object.values(doc.components.schemas).find(
          (x) => x?.properties?.type?.enum?.length === 1 && x.properties.type.enum[0] === t,
        );
      for (const rule of ruleset.rules) {
        const schema = byType(rule.type);
        expect(schema, rule.type).toBeDefined();
        const params = schema.properties.parameters;
        for (const k of params.required ?? []) expect(rule.parameters, `${rule.type}.${k}`).toHaveProperty(k);
        for (const [k, v] of Object.entries(rule.parameters)) {
          const p = params.properties[k];
          expect(p, `${rule.type}.${k}`).toBeDefined();
          if (p.enum) expect(p.enum).toContain(v);
          if (p.minimum !== undefined) expect(v).toBeGreaterThanOrEqual(p.minimum);
          if (p.maximum !== undefined) expect(v).toBeLessThanOrEqual(p.maximum);
        }
      }
      expect(ruleset.rules.map((r) => r.type)).toEqual(
        landing === 'queue' ? ['required_status_checks', 'merge_queue'] : ['required_status_checks'],
      );
      expect(ruleset.rules[0]!.parameters.required_status_checks).toEqual([
        { context: 'yoke/lander', integration_id: 777 },
      ]);
    },
  );

  it('LD04 init prints the ruleset of the way it is asked to land, says what else that way needs, and refuses a way it does not know', () => {
    const queue = init(checkout({}), '--agent', 'claude-code', '--landing', 'queue', '--app-id', '5');
    expect(queue.out).toContain(`   ${landerRuleset(5, 'queue')}`);
    expect(queue.out).toContain(
      "   Landing through GitHub's merge queue: the ruleset's merge_queue rule makes GitHub build each merge group, and yoke validates every group's commit (the app needs Merge queues: read and write). Set the queue's merge_method to the one .github/yoke.yml names.",
    );
    const ff = init(checkout({}), '--agent', 'claude-code', '--landing', 'fast-forward');
    expect(ff.out).toContain('   Landing by fast-forward: also set autoland.fast_forward: true in .github/yoke.yml.');
    const bad = init(checkout({}), '--agent', 'claude-code', '--landing', 'rebase');
    expect([bad.code, bad.err]).toEqual([
      1,
      '--landing is "rebase"; yoke lands pr, fast-forward, queue (docs/landing.md says when each fits), e.g. yoke init --agent claude-code --landing queue',
    ]);
  });

  it('TR43 init pins the check to the App ID it is given (--app-id, else APP_ID), and without one prints a placeholder and says what to put there; a bad one is refused naming the fix', () => {
    const d = checkout({ 'package.json': '{"scripts":{"test":"vitest"}}' });
    const given = init(d, '--agent', 'claude-code', '--app-id', '424242');
    expect(given.out).toContain('"required_status_checks":[{"context":"yoke/lander","integration_id":424242}]');
    const bare = init(checkout({}), '--agent', 'claude-code');
    expect(bare.out).toContain('"integration_id":APP_ID}');
    expect(bare.out).toContain(
      "   Replace APP_ID with yoke's App ID (its app settings page, or yoke init --app-id N): the check then counts only from yoke's app, not from any workflow or person who can post a status.",
    );
    const bad = init(checkout({}), '--agent', 'claude-code', '--app-id', 'yoke');
    expect(bad.code).toBe(1);
    expect(bad.err).toBe(
      '--app-id is "yoke"; give yoke\'s App ID, a number (its app settings page), e.g. yoke init --app-id 123456',
    );
  });

  for (const [kind, files, lines] of KINDS) {
    it(`on a fresh ${kind} project writes the opt-in file, the workflow and a validate.sh that runs its tests; a second run changes nothing`, () => {
      const d = checkout(files);
      const first = init(d, '--agent', 'claude-code');
      expect(first.code).toBe(0);
      expect(first.out.split('\n').slice(0, 4)).toEqual([
        'wrote .github/yoke.yml',
        'wrote .github/workflows/yoke-run.yml',
        'wrote .github/yoke/validate.sh',
        'wrote .github/yoke/yoke.schema.json',
      ]);
      expect(first.out).toContain(`validate.sh runs: ${lines.join(' && ')}`);
      expect(first.out.endsWith(`${SWITCHED_ON}\n\n${NEXT('ANTHROPIC_API_KEY (or CLAUDE_CODE_OAUTH_TOKEN)')}`)).toBe(
        true,
      );
      const validate = readFileSync(join(d, '.github/yoke/validate.sh'), 'utf8');
      expect(validate.trimEnd().split('\n').slice(-lines.length)).toEqual(lines);
      expect(statSync(join(d, '.github/yoke/validate.sh')).mode & 0o111).not.toBe(0);
      expect(readFileSync(join(d, '.github/workflows/yoke-run.yml'), 'utf8')).toBe(
        readFileSync('templates/agents/claude-code.yml', 'utf8'),
      );
      expect(parseRepoConfig(parse(readFileSync(join(d, '.github/yoke.yml'), 'utf8'))).state).toBe('valid');
      const before = ['.github/yoke.yml', '.github/workflows/yoke-run.yml', '.github/yoke/validate.sh'].map((p) =>
        readFileSync(join(d, p), 'utf8'),
      );
      const second = init(d, '--agent', 'claude-code');
      expect(second.code).toBe(0);
      expect(second.out.split('\n').slice(0, 5)).toEqual([
        'kept  .github/yoke.yml (it is there already; yoke init never overwrites)',
        'kept  .github/workflows/yoke-run.yml (it is there already; yoke init never overwrites)',
        'kept  .github/yoke/validate.sh (it is there already; yoke init never overwrites)',
        'kept  .github/yoke/yoke.schema.json (it is there already; yoke init never overwrites)',
        'Nothing changed.',
      ]);
      expect(
        ['.github/yoke.yml', '.github/workflows/yoke-run.yml', '.github/yoke/validate.sh'].map((p) =>
          readFileSync(join(d, p), 'utf8'),
        ),
      ).toEqual(before);
    }, 30_000);
  }

  it('keeps an opt-in file that is there, writes the rest for Codex, and says so', () => {
    const mine = 'auto: false\n';
    const d = checkout({ '.github/yoke.yml': mine, 'go.mod': 'module x\n' });
    const r = init(d, '--agent', 'codex');
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      [
        'wrote .github/workflows/yoke-run.yml',
        'wrote .github/yoke/validate.sh',
        'wrote .github/yoke/yoke.schema.json',
        'kept  .github/yoke.yml (it is there already; yoke init never overwrites)',
        'validate.sh runs: go test ./... (found go.mod).',
        '',
        NEXT('CODEX_API_KEY'),
      ].join('\n'),
    );
    expect(readFileSync(join(d, '.github/yoke.yml'), 'utf8')).toBe(mine);
    expect(readFileSync(join(d, '.github/workflows/yoke-run.yml'), 'utf8')).toBe(
      readFileSync('templates/agents/codex.yml', 'utf8'),
    );
  }, 30_000);

  it('asked for Codex where the workflow runs Claude Code, says what is there and how to switch, and names the secret that workflow needs', () => {
    const d = checkout({ 'go.mod': 'module x\n' });
    expect(init(d, '--agent', 'claude-code').code).toBe(0);
    const r = init(d, '--agent', 'codex');
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      [
        'kept  .github/yoke.yml (it is there already; yoke init never overwrites)',
        'kept  .github/workflows/yoke-run.yml: it runs claude-code, not codex. To switch to codex, delete it and run yoke init --agent codex again (then add CODEX_API_KEY instead of the secret below).',
        'kept  .github/yoke/validate.sh (it is there already; yoke init never overwrites)',
        'kept  .github/yoke/yoke.schema.json (it is there already; yoke init never overwrites)',
        'Nothing changed.',
        'validate.sh runs: go test ./... (found go.mod).',
        '',
        NEXT('ANTHROPIC_API_KEY (or CLAUDE_CODE_OAUTH_TOKEN)'),
      ].join('\n'),
    );
  }, 30_000);

  const pytest = spawnSync('python3', ['-c', 'import venv, pytest'], { stdio: 'ignore' }).status === 0;
  it("a Python project's validate.sh runs its tests in a virtual environment of its own, outside the checkout, and fails when they do", (ctx) => {
    if (!pytest) ctx.skip('python3 with venv and pytest is not here, so the Python validate.sh is not run');
    const d = checkout({
      'pytest.ini': '[pytest]\n',
      'test_sum.py': 'def test_sum():\n    assert 1 + 1 == 2\n',
    });
    expect(init(d, '--agent', 'claude-code').code).toBe(0);
    const temp = mkdtempSync(join(tmpdir(), 'yoke-runner-temp-'));
    dirs.push(temp);
    const run = () =>
      spawnSync('bash', ['.github/yoke/validate.sh'], {
        cwd: d,
        encoding: 'utf8',
        env: { PATH: process.env.PATH, HOME: process.env.HOME, RUNNER_TEMP: temp, PIP_NO_INDEX: '1' },
      });
    const passed = run();
    expect([passed.status, passed.stdout]).toEqual([0, expect.stringContaining('1 passed')]);
    expect(existsSync(join(temp, 'yoke-venv', 'bin', 'activate'))).toBe(true);
    writeFileSync(join(d, 'test_sum.py'), 'def test_sum():\n    assert 1 + 1 == 3\n');
    expect(run().status).toBe(1);
  }, 60_000);

  it('with no test command it writes a validate.sh that rejects until edited, and says so', () => {
    const d = checkout({
      'README.md': '# x\n',
      'package.json': '{"scripts":{"test":"echo \\"Error: no test specified\\" && exit 1"}}',
    });
    const r = init(d, '--agent', 'claude-code');
    expect(r.out).toContain('No test command was found: edit .github/yoke/validate.sh to run your tests.');
    expect(spawnSync('bash', ['.github/yoke/validate.sh'], { cwd: d }).status).toBe(1);
  }, 30_000);

  it('refuses outside a checkout and for an agent it does not know, naming the fix, writing nothing', () => {
    const d = mkdtempSync(join(tmpdir(), 'yoke-init-bare-'));
    dirs.push(d);
    expect(init(d, '--agent', 'claude-code')).toEqual({
      code: 1,
      out: '',
      err: `${d} is not a git checkout: run yoke init in a clone of your repository, or name one: yoke init --agent claude-code PATH`,
    });
    const c = checkout({});
    expect(init(c, '--agent', 'aider')).toEqual({
      code: 1,
      out: '',
      err: '--agent is "aider"; yoke knows claude-code and codex, e.g. yoke init --agent claude-code',
    });
    expect(init(c).err).toBe(
      'Name what to set up: yoke init --agent claude-code (or codex), yoke init --delivery, or both.',
    );
    expect(spawnSync('git', ['status', '--porcelain'], { cwd: c, encoding: 'utf8' }).stdout).toBe('');
  }, 30_000);

  it('DP05 --delivery writes the deploy workflow and deploy.sh, adds the delivery stages to an opt-in file without them, and prints the environment settings to make', () => {
    const c = checkout({ 'package.json': '{"scripts":{"test":"vitest run"}}' });
    const first = init(c, '--agent', 'claude-code', '--delivery', '--app', 'yoke-acme');
    expect(first.code).toBe(0);
    expect(first.out).toContain(
      'wrote .github/workflows/deploy.yml\nwrote .github/yoke/deploy.sh\nappended delivery: (staging, staging-qa, production) to the end of .github/yoke.yml, which had none; nothing else in it changed',
    );
    expect(first.out.split('Then, on GitHub (Settings, Environments):\n')[1]).toBe(
      [
        "1. production: New environment, then under Deployment protection rules tick `yoke-acme` (yoke's app) and save. Without it yoke's QA gate is advisory only: the fleet report warns until it is on.",
        '2. production and staging, Deployment branches and tags: allow `yoke/deploy/*` (yoke runs each deploy on a branch pinned to the commit it delivers) and any branch you deploy from by hand.',
        "3. Put your deploy in .github/yoke/deploy.sh; it runs in the environment's job, with the environment's secrets.",
        '4. Attach QA plans (.github/yoke/qa/), commit and push, then deliver: `yoke deployment-runs create OWNER/REPO` and `yoke watch deploy -- RUN-ID`.',
      ].join('\n'),
    );
    expect(readFileSync(join(c, '.github/workflows/deploy.yml'), 'utf8')).toBe(
      readFileSync('templates/deploy.yml', 'utf8'),
    );
    expect(statSync(join(c, '.github/yoke/deploy.sh')).mode & 0o111).not.toBe(0);
    // The opt-in file is yoke's own, with the delivery stages yoke's parser takes.
    const cfg = parseRepoConfig(parse(readFileSync(join(c, '.github/yoke.yml'), 'utf8')));
    expect(cfg.state).toBe('valid');
    const d = parseDeliverySettings('acme/app', (cfg as { config: { delivery: unknown } }).config.delivery);
    expect(
      d.state === 'valid' &&
        d.settings.stages.map((st) => [st.name, st.kind, st.kind === 'deploy' ? st.workflow : null]),
    ).toEqual([
      ['staging', 'deploy', 'deploy.yml'],
      ['staging-qa', 'qa', null],
      ['production', 'deploy', 'deploy.yml'],
    ]);
    // What it wrote passes `yoke config check` with nothing to note: the QA stage says what it does with no plan attached.
    const check = spawnSync(process.execPath, [YOKE, 'config', 'check', '.'], {
      cwd: c,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
    });
    expect({ code: check.status, out: check.stdout.trim(), err: check.stderr.trim() }).toEqual({
      code: 0,
      out: 'ok: .github/yoke.yml is valid\nok: .github/yoke/qa/ has no QA plans',
      err: '',
    });
    // Again: nothing is overwritten, and no second delivery section is added.
    const before = readFileSync(join(c, '.github/yoke.yml'), 'utf8');
    const again = init(c, '--delivery');
    expect(again.out.split('\n').slice(0, 3)).toEqual([
      'kept  .github/workflows/deploy.yml (it is there already; yoke init never overwrites)',
      'kept  .github/yoke/deploy.sh (it is there already; yoke init never overwrites)',
      'kept  .github/yoke.yml (delivery:) (it is there already; yoke init never overwrites)',
    ]);
    expect(readFileSync(join(c, '.github/yoke.yml'), 'utf8')).toBe(before);
  });

  it('--delivery alone adds the section to an opt-in file that has none; with neither flag it names what to ask for', () => {
    const c = checkout({ '.github/yoke.yml': 'auto: true\n' });
    expect(init(c, '--delivery').out).toContain(
      'appended delivery: (staging, staging-qa, production) to the end of .github/yoke.yml, which had none; nothing else in it changed',
    );
    expect(
      readFileSync(join(c, '.github/yoke.yml'), 'utf8').startsWith(
        'auto: true\n\n# Delivery (written by yoke init --delivery)',
      ),
    ).toBe(true);
    expect(init(c)).toEqual({
      code: 1,
      out: '',
      err: 'Name what to set up: yoke init --agent claude-code (or codex), yoke init --delivery, or both.',
    });
  });
});
