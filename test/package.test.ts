import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { optInJsonSchema, planJsonSchema } from '../src/config/schema.js';
import { stoppedMessage } from '../src/main.js';

// yoke as a new user gets it: `npm pack` makes the tarball (its prepack
// compiles src/ to dist/), `npm install` puts it in a folder with no yoke
// checkout, and the installed `yoke` runs from there: compiled JavaScript,
// no TypeScript sources and no tsx. Tests never reach the registry, so the
// tarball's dependencies are seeded from this checkout's own (production ones
// only) and npm installs offline.

const ROOT = resolve(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  dependencies: Record<string, string>;
};
const dir = mkdtempSync(join(tmpdir(), 'yoke-package-'));
const app = join(dir, 'app');
const repo = join(dir, 'repo');
const bin = join(app, 'node_modules', '.bin');
let tarball = '';

/** npm with nothing that reaches out: no update check, no audit, no funding calls. */
const NPM_QUIET = {
  ...process.env,
  npm_config_update_notifier: 'false',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
};

const run = (cmd: string, args: string[], cwd: string, env: Record<string, string> = {}) => {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    env: { PATH: `${bin}:${process.env.PATH}`, HOME: dir, ...env },
  });
  return { code: r.status, out: r.stdout.trimEnd(), err: r.stderr.trimEnd() };
};

/** The production packages of this checkout's lockfile, top level: what the registry would give the tarball. */
function productionPackages(): string[] {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean; devOptional?: boolean }>;
  };
  return Object.entries(lock.packages)
    .filter(([k, v]) => /^node_modules\/(@[^/]+\/)?[^/]+$/.test(k) && !v.dev && !v.devOptional)
    .map(([k]) => k.slice('node_modules/'.length));
}

beforeAll(() => {
  execFileSync('npm', ['pack', '--pack-destination', dir, '--silent'], { cwd: ROOT, stdio: 'ignore', env: NPM_QUIET });
  tarball = join(
    dir,
    readdirSync(dir).find((f) => f.endsWith('.tgz'))!,
  );
  mkdirSync(join(app, 'node_modules'), { recursive: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'my-app', private: true }));
  for (const name of productionPackages()) {
    if (existsSync(join(ROOT, 'node_modules', name)))
      cpSync(join(ROOT, 'node_modules', name), join(app, 'node_modules', name), {
        recursive: true,
        verbatimSymlinks: true,
      });
  }
  // Their binaries' links too, or npm would take them for half-installed and fetch them again.
  cpSync(join(ROOT, 'node_modules', '.bin'), join(app, 'node_modules', '.bin'), {
    recursive: true,
    verbatimSymlinks: true,
  });
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball], {
    cwd: app,
    stdio: 'ignore',
    env: NPM_QUIET,
  });
  // tsx is for working on yoke; the runtime must not need it: make sure it is not there.
  rmSync(join(app, 'node_modules', 'tsx'), { recursive: true, force: true });
  mkdirSync(repo);
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo });
}, 180_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the package, installed from its tarball', () => {
  it('is a scoped package of compiled JavaScript: no TypeScript sources, a yoke binary, and the JSON schemas', () => {
    expect(pkg.name).toMatch(/^@[\w-]+\/yoke$/);
    const installed = join(app, 'node_modules', ...pkg.name.split('/'));
    expect(existsSync(join(installed, 'dist', 'cli', 'main.js'))).toBe(true);
    expect(existsSync(join(installed, 'src'))).toBe(false);
    const files = readdirSync(installed, { recursive: true }).map(String);
    expect(files.filter((f) => f.endsWith('.ts'))).toEqual([]);
    expect(existsSync(join(bin, 'yoke'))).toBe(true);
    // The schemas an editor reads, as files of the package too.
    expect(JSON.parse(readFileSync(join(installed, 'dist', 'yoke.schema.json'), 'utf8'))).toEqual(optInJsonSchema());
    expect(JSON.parse(readFileSync(join(installed, 'dist', 'qa-plan.schema.json'), 'utf8'))).toEqual(planJsonSchema());
  });

  it('yoke --version prints the package version', () => {
    expect(run('yoke', ['--version'], repo)).toEqual({ code: 0, out: pkg.version, err: '' });
  });

  it('yoke init --agent claude-code writes the opt-in file, the workflow and validate.sh, and yoke config check passes it', () => {
    const init = run('yoke', ['init', '--agent', 'claude-code'], repo);
    expect(init.code).toBe(0);
    expect(init.out.split('\n').slice(0, 4)).toEqual([
      'wrote .github/yoke.yml',
      'wrote .github/workflows/yoke-run.yml',
      'wrote .github/yoke/validate.sh',
      'wrote .github/yoke/yoke.schema.json',
    ]);
    expect(run('yoke', ['config', 'check', '.'], repo)).toEqual({
      code: 0,
      out: 'ok: .github/yoke.yml is valid',
      err: '',
    });
  });

  it("the README's pre-commit hook runs the installed yoke, never one from the registry: a bad opt-in file stops the commit", () => {
    const hook = /# \.git\/hooks\/pre-commit\n([\s\S]*?)```/.exec(readFileSync(join(ROOT, 'README.md'), 'utf8'))?.[1];
    expect(hook).toBeDefined();
    expect(hook).not.toMatch(/^[^#]*npx/m);
    writeFileSync(join(repo, '.git', 'hooks', 'pre-commit'), `#!/bin/sh\n${hook}`);
    chmodSync(join(repo, '.git', 'hooks', 'pre-commit'), 0o755);
    const git = (...args: string[]) =>
      run('git', ['-c', 'user.name=me', '-c', 'user.email=me@example.com', ...args], repo);
    // Offline: an npx that reached for the registry would fail here, not pass.
    const offline = { npm_config_offline: 'true', npm_config_update_notifier: 'false' };
    expect(git('add', '.').code).toBe(0);
    expect(
      run('git', ['-c', 'user.name=me', '-c', 'user.email=me@example.com', 'commit', '-qm', 'yoke'], repo, offline)
        .code,
    ).toBe(0);
    writeFileSync(join(repo, '.github', 'yoke.yml'), 'version: 2\n');
    expect(git('add', '.').code).toBe(0);
    const refused = run(
      'git',
      ['-c', 'user.name=me', '-c', 'user.email=me@example.com', 'commit', '-qm', 'bad'],
      repo,
      offline,
    );
    expect(refused.code).toBe(1);
    // git hands a hook's output to its stderr.
    expect(refused.err).toMatch(/^refused: /);
  });

  it('yoke serve runs the server from the package, and says so when Ctrl-C stops it', async () => {
    const child = spawn(join(bin, 'yoke'), ['serve'], {
      cwd: repo,
      env: { PATH: process.env.PATH ?? '', HOME: dir, PORT: '39181', YOKE_DB_PATH: join(dir, 'serve.db') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const closed = new Promise<number | null>((done) => child.on('close', done));
    try {
      await expect
        .poll(() => out, { timeout: 20_000, interval: 100 })
        .toContain('open http://localhost:39181/yoke/setup');
      // No app registered yet: the setup page that registers one answers.
      expect((await fetch('http://localhost:39181/yoke/setup')).status).toBe(200);
    } finally {
      child.kill('SIGINT');
    }
    expect({ code: await closed, err: err.trimEnd() }).toEqual({ code: 0, err: stoppedMessage('SIGINT') });
  }, 30_000);

  it('yoke agent names its commands, the ones docs/agents.md says a workflow job runs', () => {
    expect(run('yoke', ['agent', 'nope'], repo)).toEqual({
      code: 1,
      out: '',
      err: 'yoke agent nope: no such command; say one of run, deliver, verdict, validate.',
    });
  });
});
