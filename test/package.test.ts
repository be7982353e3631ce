import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { optInJsonSchema, planJsonSchema } from '../src/config/schema.js';
import { stoppedMessage } from '../src/main.js';

// yoke as a new user gets it: `npm pack` makes the tarball (its prepack
// compiles src/ to dist/ and builds the runner), and `npm install` puts it in
// a folder with no yoke checkout, on this Node 20. The tarball carries its
// production dependencies (`bundleDependencies`), exactly the tree this
// checkout's tests ran, so npm fetches nothing else and re-resolves nothing:
// the tarball is served by a registry on loopback, the only one npm may
// reach, and it is asked for yoke and nothing more. (The README installs the
// file itself; npm then unpacks the whole tarball once more only to read its
// package.json, 25 of this test's seconds, and installs the same files.) The
// one install script (better-sqlite3's) is approved as the README says, and
// finds its prebuilt binary in npm's cache where a download from GitHub
// would have put it.

const ROOT = resolve(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  dependencies: Record<string, string>;
  overrides: Record<string, string>;
  bundleDependencies: string[];
};
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; dev?: boolean }>;
};
/** The install scripts the README's install command approves (`--allow-scripts=…`), as a project's allowScripts. */
const APPROVED = Object.fromEntries(
  (/--allow-scripts=([\w,@/.-]+)/.exec(readFileSync(join(ROOT, 'README.md'), 'utf8'))?.[1] ?? '')
    .split(',')
    .filter(Boolean)
    .map((name) => [name, true]),
);
const dir = mkdtempSync(join(tmpdir(), 'yoke-package-'));
const app = join(dir, 'app');
const repo = join(dir, 'repo');
const bin = join(app, 'node_modules', '.bin');
const npmCache = join(dir, 'npm-cache');
let tarball = '';
let install = { code: 0 as number | null, out: '', err: '' };

/** npm with nothing that reaches out: no update check, no audit, no funding calls; a cache of its own. */
const NPM_QUIET = {
  ...process.env,
  npm_config_update_notifier: 'false',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_cache: npmCache,
};

const run = (cmd: string, args: string[], cwd: string, env: Record<string, string> = {}) => {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    env: { PATH: `${bin}:${process.env.PATH}`, HOME: dir, ...env },
  });
  return { code: r.status, out: r.stdout.trimEnd(), err: r.stderr.trimEnd() };
};

/**
 * better-sqlite3's install script (prebuild-install) looks for its binary in
 * npm's cache before downloading it from GitHub: put this checkout's there,
 * packed as the release asset is, under the name the download would get.
 */
function seedSqlitePrebuild(): void {
  // prebuild-install reads npm's cache folder from the environment, as npm hands it to an install script.
  const prev = process.env.npm_config_cache;
  process.env.npm_config_cache = npmCache;
  try {
    packPrebuild();
  } finally {
    if (prev === undefined) delete process.env.npm_config_cache;
    else process.env.npm_config_cache = prev;
  }
}

function packPrebuild(): void {
  const req = createRequire(join(ROOT, 'node_modules', 'better-sqlite3', 'package.json'));
  const util = req('prebuild-install/util') as {
    getDownloadUrl(o: object): string;
    cachedPrebuild(url: string): string;
  };
  const sqlitePkg = req('./package.json') as object;
  // As prebuild-install's own settings have it: release tags are `v<version>`.
  const url = util.getDownloadUrl({
    pkg: sqlitePkg,
    platform: process.platform,
    arch: process.arch,
    'tag-prefix': 'v',
  });
  const cached = util.cachedPrebuild(url);
  mkdirSync(dirname(cached), { recursive: true });
  execFileSync('tar', ['czf', cached, 'build/Release/better_sqlite3.node'], {
    cwd: join(ROOT, 'node_modules', 'better-sqlite3'),
  });
}

/**
 * A registry on loopback that holds one package, the packed tarball, as `npm publish` would put it there (its own
 * package.json, with where to fetch it and its integrity); `asked` lists each request npm made.
 */
async function registryOf(tgz: string): Promise<{ url: string; asked: string[]; close(): Promise<void> }> {
  const bytes = readFileSync(tgz);
  const manifest = JSON.parse(execFileSync('tar', ['-xzOf', tgz, 'package/package.json'], { encoding: 'utf8' })) as {
    name: string;
    version: string;
  };
  const asked: string[] = [];
  const server = createServer((req, res) => {
    asked.push(`${req.method} ${req.url}`);
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (req.url === `/${manifest.name.replace('/', '%2f')}`) {
      const dist = {
        tarball: `${url}/${basename(tgz)}`,
        integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}`,
        shasum: createHash('sha1').update(bytes).digest('hex'),
      };
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          _id: manifest.name,
          name: manifest.name,
          'dist-tags': { latest: manifest.version },
          versions: { [manifest.version]: { ...manifest, _id: `${manifest.name}@${manifest.version}`, dist } },
        }),
      );
    } else if (req.url === `/${basename(tgz)}`) res.end(bytes);
    else res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    asked,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A command run without blocking this process (the registry answers from it); its exit code and output. */
function spawnDone(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('close', (code) => resolve({ code, out: out.trimEnd(), err: err.trimEnd() }));
  });
}

let asked: string[] = [];

beforeAll(async () => {
  execFileSync('npm', ['pack', '--pack-destination', dir, '--silent'], { cwd: ROOT, stdio: 'ignore', env: NPM_QUIET });
  tarball = join(
    dir,
    readdirSync(dir).find((f) => f.endsWith('.tgz'))!,
  );
  seedSqlitePrebuild();
  mkdirSync(app);
  // What the README tells a project to write: better-sqlite3 may run its install script.
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'my-app', private: true, allowScripts: APPROVED }));
  const registry = await registryOf(tarball);
  try {
    install = await spawnDone('npm', ['install', `${pkg.name}@${pkg.version}`], app, {
      ...NPM_QUIET,
      npm_config_registry: registry.url,
    });
  } finally {
    await registry.close();
  }
  asked = registry.asked;
  mkdirSync(repo);
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo });
}, 180_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the package, installed from its tarball', () => {
  it('installs on Node 20 with not one warning from npm, asking the registry for yoke alone, and holds exactly the dependency versions the tests ran', () => {
    expect(process.versions.node).toMatch(/^20\./);
    // Every dependency ships inside the tarball, so npm resolves nothing anew: it asks for yoke, then its tarball.
    expect(pkg.bundleDependencies).toEqual(Object.keys(pkg.dependencies));
    // (npm pack left the tarball in npm's cache under its integrity, so npm may not need to fetch it.)
    expect(asked.filter((a) => a !== `GET /${basename(tarball)}`)).toEqual([`GET /${pkg.name.replace('/', '%2f')}`]);
    expect(install.err).toBe('');
    expect(install.out.trim()).toMatch(/^added 1 package in [\d.]+(ms|s|m)$/);
    const mine = join(app, 'node_modules', ...pkg.name.split('/'));
    const tree = JSON.parse(readFileSync(join(app, 'node_modules', '.package-lock.json'), 'utf8')) as {
      packages: Record<string, { version?: string }>;
    };
    const prefix = `node_modules/${pkg.name}/`;
    const shipped = Object.entries(tree.packages)
      .filter(([k]) => k.startsWith(prefix))
      .map(([k, v]): [string, string | undefined] => [k.slice(prefix.length), v.version]);
    const tested = Object.entries(lock.packages)
      .filter(([k, v]) => k.startsWith('node_modules/') && !v.dev)
      .map(([k, v]) => [k, v.version]);
    expect(Object.fromEntries(shipped)).toEqual(Object.fromEntries(tested));
    // The ones the repository overrides are among them, at the version it pins: none asks for a newer Node.
    for (const [name, version] of Object.entries(pkg.overrides)) {
      const found = shipped.filter(([k]) => k === `node_modules/${name}` || k.endsWith(`/node_modules/${name}`));
      expect(found.length).toBeGreaterThan(0);
      expect(found.map(([, v]) => v)).toEqual(found.map(() => version));
    }
    // Development tools stay out: the runner comes built, so no bundler, and no tsx.
    expect(existsSync(join(mine, 'node_modules', 'esbuild'))).toBe(false);
    expect(readFileSync(join(mine, 'dist', 'agent', 'runner.mjs'), 'utf8')).toMatch(/^\/\/ yoke runner: built by yoke/);
    expect(existsSync(join(app, 'node_modules', 'tsx'))).toBe(false);
  });

  it('is a scoped package of compiled JavaScript: no TypeScript sources, a yoke binary, and the JSON schemas', () => {
    expect(pkg.name).toMatch(/^@[\w-]+\/yoke$/);
    const installed = join(app, 'node_modules', ...pkg.name.split('/'));
    expect(existsSync(join(installed, 'dist', 'cli', 'main.js'))).toBe(true);
    expect(existsSync(join(installed, 'src'))).toBe(false);
    // Its own files; the dependencies it carries ship their type declarations as published.
    const files = readdirSync(installed, { recursive: true })
      .map(String)
      .filter((f) => !f.startsWith('node_modules/'));
    expect(files.filter((f) => f.endsWith('.ts'))).toEqual([]);
    // No build objects of better-sqlite3 (a checkout that compiled it has 17 MB of them): the user's install makes its own.
    const listed = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).split('\n');
    expect(listed.filter((f) => f.startsWith('package/node_modules/better-sqlite3/build/'))).toEqual([]);
    expect(listed).toContain('package/node_modules/better-sqlite3/deps/sqlite3/sqlite3.c');
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
