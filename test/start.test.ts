import { spawn } from 'node:child_process';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { parse } from 'yaml';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hostingProblems, runContainmentProblem } from '../src/config/hosting-checks.js';
import { freePort } from '../sandbox/yoke-process.js';
import { TEST_SERVER } from './helpers/bundles-global.js';

// `npm start` as an operator meets it with half a set of app credentials: a
// child process, whole messages compared. yoke stops and names the variable;
// it never falls silently into the setup page.

// src/main.ts bundled once for the run (test/helpers/bundles-global.ts): 0.8 s of CPU a start against 2.3 s through tsx.
const cwd = mkdtempSync(join(tmpdir(), 'yoke-start-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

function start(env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [TEST_SERVER], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: cwd, PORT: '39170', YOKE_DB_PATH: join(cwd, 'yoke.db'), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('close', (code) => (clearTimeout(kill), done({ code, out: out.trimEnd(), err: err.trimEnd() })));
  });
}

const stops = (problem: string) => ({
  code: 1,
  out: '',
  err: `yoke cannot start; fix these settings:\n  - ${problem}`,
});

describe('npm start with half the app credentials', () => {
  it('APP_ID without a key stops with what to set, instead of serving the setup page', async () => {
    expect(await start({ APP_ID: '123456' })).toEqual(
      stops(
        "APP_ID is set (123456) but the app's private key is not. Set PRIVATE_KEY (the PEM text) or PRIVATE_KEY_PATH (its file); or unset APP_ID to run yoke's setup page, which registers the app and writes both to .env.",
      ),
    );
  });

  it('a PRIVATE_KEY_PATH naming a missing file stops with the path, and no stack trace', async () => {
    expect(await start({ APP_ID: '123456', PRIVATE_KEY_PATH: 'keys/yoke.pem' })).toEqual(
      stops(
        'PRIVATE_KEY_PATH names keys/yoke.pem, which is not there. Point it at the .pem file GitHub gave you when the app was created, or set PRIVATE_KEY to its text.',
      ),
    );
  });

  it('a key without APP_ID stops too', async () => {
    expect(await start({ PRIVATE_KEY: '-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----' })).toEqual(
      stops(
        "The app's private key is set but APP_ID is not. Set APP_ID to the app's id (on its settings page on GitHub), or unset PRIVATE_KEY and PRIVATE_KEY_PATH to run the setup page.",
      ),
    );
  });
});

/** An app's key, and the settings a hosted yoke starts with besides it. */
const SECRET = 'w'.repeat(40);
const key = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .privateKey.export({ type: 'pkcs1', format: 'pem' })
  .toString();
const hosted = {
  APP_ID: '123456',
  WEBHOOK_SECRET: SECRET,
  YOKE_API_TOKENS: 'o'.repeat(40),
  YOKE_PUBLIC_URL: 'https://yoke.example.com',
};

describe('npm start with app credentials that cannot work', () => {
  it('a PRIVATE_KEY that is not a key stops with the variable and where to get one, and no stack trace', async () => {
    expect(await start({ ...hosted, PRIVATE_KEY: 'not a key' })).toEqual(
      stops(
        'PRIVATE_KEY is not a private key yoke can read. Use the .pem file GitHub gave you when the app was created (its settings page makes a new one under "Private keys"): its whole text in PRIVATE_KEY, or its path in PRIVATE_KEY_PATH.',
      ),
    );
  });

  it('no YOKE_API_TOKENS and no YOKE_PUBLIC_URL stop with both named, instead of a sign-in no token passes and runs told localhost', async () => {
    expect(await start({ APP_ID: '123456', WEBHOOK_SECRET: SECRET, PRIVATE_KEY: key })).toEqual({
      code: 1,
      out: '',
      err: [
        'yoke cannot start; fix these settings:',
        '  - YOKE_API_TOKENS is not set, so no one could sign in to the dashboard or use the CLI. Make a token with `openssl rand -hex 32` and set YOKE_API_TOKENS to it (several: comma-separated); the CLI reads it as YOKE_TOKEN.',
        "  - YOKE_PUBLIC_URL is not set, so runs would be told to report to http://localhost:39170, which GitHub's runners cannot reach. Set YOKE_RUNS_REACH=github, and runs hand their results back through GitHub, with no URL of yoke's to reach; or set YOKE_PUBLIC_URL to the https address GitHub reaches yoke at (the app's webhook URL without /api/github/webhooks), e.g. YOKE_PUBLIC_URL=https://yoke.example.com.",
      ].join('\n'),
    });
  });

  it('with YOKE_RUNS_REACH=github no public URL is asked for: runs call no URL of yoke’s', async () => {
    const r = await start({ APP_ID: '123456', WEBHOOK_SECRET: SECRET, PRIVATE_KEY: key, YOKE_RUNS_REACH: 'github' });
    expect(r.err.split('\n').filter((l) => l.includes('YOKE_PUBLIC_URL'))).toEqual([]);
    expect(r.err).toContain('YOKE_API_TOKENS is not set');
  });
});

describe('npm start, once it runs', () => {
  it('TR06 yoke keeps no secret in its environment: once started, /proc/<pid>/environ shows neither the app key, the webhook secret, the operator and person tokens, the metrics token nor the OTLP headers', async () => {
    const key = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs1', format: 'pem' })
      .toString();
    const secrets = {
      PRIVATE_KEY: key,
      WEBHOOK_SECRET: 'webhook-secret-0123456789abcdef0123456789',
      YOKE_API_TOKENS: 'operator-token-0123456789abcdef0123456789',
      YOKE_PERSON_TOKENS: 'alice:person-token-0123456789abcdef0123456789',
      YOKE_METRICS_TOKEN: 'metrics-token-0123456789abcdef0123456789',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20otlp-secret-0123456789abcdef',
    };
    // A port free now, not a fixed one: the kernel hands ports of this range to other tests' servers too.
    const port = await freePort();
    const child = spawn(process.execPath, [TEST_SERVER], {
      cwd,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: cwd,
        PORT: String(port),
        YOKE_DB_PATH: join(cwd, 'running.db'),
        APP_ID: '123456',
        YOKE_RUNS_REACH: 'github',
        // No GitHub to reach: the ticks fail quietly at this level; what is tested is yoke's own memory.
        GHE_HOST: '127.0.0.1:9',
        GHE_PROTOCOL: 'http',
        LOG_LEVEL: 'fatal',
        ...secrets,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    try {
      // Started: it answers on its port.
      await expect
        .poll(async () => (await fetch(`http://127.0.0.1:${port}/yoke/health`).catch(() => null))?.status ?? 0, {
          timeout: 20_000,
          interval: 100,
          message: `yoke did not answer on port ${port}; it printed:\n${out}`,
        })
        .not.toBe(0);
      // It forgets them right after it starts listening.
      const environ = () => readFileSync(`/proc/${child.pid}/environ`, 'latin1');
      const held = () =>
        Object.values(secrets).filter((v) => environ().includes(v.includes('BEGIN') ? v.split('\n')[1]! : v));
      await expect.poll(held, { timeout: 5_000, interval: 50 }).toEqual([]);
      expect(environ()).toContain('APP_ID=123456');
      for (const name of Object.keys(secrets)) expect(environ()).toContain(`${name}=`);
    } finally {
      child.kill('SIGKILL');
    }
    expect(out).not.toMatch(/Error|error/);
  }, 30_000);
});

describe('what npm start checks of app credentials, one by one', () => {
  const key = generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ type: 'pkcs1', format: 'pem' })
    .toString();
  const readKey = (pem: string) => void createPrivateKey(pem);
  const noFile = () => {
    throw new Error('no such file');
  };
  const good = { APP_ID: '1', PRIVATE_KEY: key, YOKE_API_TOKENS: 'o'.repeat(40), YOKE_PUBLIC_URL: 'https://y.example' };

  it('reads the key as Probot does (PEM, with its newlines as \\n, or base64) and asks nothing in setup mode', () => {
    expect(hostingProblems(good, noFile, readKey)).toEqual([]);
    expect(hostingProblems({ ...good, PRIVATE_KEY: key.replace(/\n/g, '\\n') }, noFile, readKey)).toEqual([]);
    expect(hostingProblems({ ...good, PRIVATE_KEY: Buffer.from(key).toString('base64') }, noFile, readKey)).toEqual([]);
    expect(hostingProblems({}, noFile, readKey)).toEqual([]);
  });

  it('names a key file that is not a key, and needs no public URL for the command launcher', () => {
    const { PRIVATE_KEY: _key, ...rest } = good;
    expect(hostingProblems({ ...rest, PRIVATE_KEY_PATH: 'app.pem' }, () => 'garbage', readKey)).toEqual([
      'PRIVATE_KEY_PATH names app.pem, which is not a private key yoke can read. Use the .pem file GitHub gave you when the app was created (its settings page makes a new one under "Private keys"): its whole text in PRIVATE_KEY, or its path in PRIVATE_KEY_PATH.',
    ]);
    const { YOKE_PUBLIC_URL: _url, ...local } = good;
    expect(hostingProblems({ ...local, YOKE_LAUNCHER: 'command' }, noFile, readKey)).toEqual([]);
    expect(hostingProblems(local, noFile, readKey)).toHaveLength(1);
  });
});

describe('npm start with the command launcher', () => {
  it('TR06 refuses to start runs it cannot contain, naming the fix, unless the operator says to run them uncontained', () => {
    const env = { APP_ID: '1', PRIVATE_KEY: 'k', YOKE_LAUNCHER: 'command', YOKE_COMMAND: 'yoke agent run' };
    expect(runContainmentProblem(env, () => 'bubblewrap is not installed')).toBe(
      "YOKE_LAUNCHER=command: bubblewrap is not installed, and the command launcher runs each run under it, so that the PR's code a run holds cannot read the app key, the store or yoke's own process. Install it (`sudo apt-get install -y bubblewrap`; on Ubuntu 24.04 also `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`), or set YOKE_COMMANDS_UNCONTAINED=1 to run them as yoke's user, knowing they can then read all that.",
    );
    expect(runContainmentProblem({ ...env, YOKE_COMMANDS_UNCONTAINED: '1' }, () => 'not installed')).toBeNull();
    expect(runContainmentProblem({ ...env, YOKE_LAUNCHER: 'actions' }, () => 'not installed')).toBeNull();
    expect(runContainmentProblem(env, () => null)).toBeNull();
  });
});

describe("npm start with no app yet: yoke's setup page", () => {
  it("TR34 registers the app from the app.yml yoke ships, with yoke's webhook path, and makes no smee.io channel; unasked, it listens on loopback only", async () => {
    // Run from a folder with no app.yml: the manifest comes from yoke's own, wherever yoke runs from.
    const port = await freePort();
    const child = spawn(process.execPath, [TEST_SERVER], {
      cwd,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: cwd,
        PORT: String(port),
        YOKE_DB_PATH: join(cwd, 'setup.db'),
        YOKE_PUBLIC_URL: 'https://yoke.example.com/',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    try {
      await expect
        .poll(() => out, { timeout: 20_000, interval: 100 })
        .toContain(`yoke has no GitHub App yet: open http://localhost:${port}/yoke/setup to register one.`);
      const root = await fetch(`http://localhost:${port}/`, { redirect: 'manual' });
      expect([root.status, root.headers.get('location')]).toEqual([302, '/yoke/setup']);
      const page = await (await fetch(`http://localhost:${port}/yoke/setup`)).text();
      const manifest = JSON.parse(decodeHtml(/name="manifest" value="([^"]*)"/.exec(page)?.[1] ?? '{}')) as Record<
        string,
        unknown
      >;
      const appYml = parse(readFileSync(resolve(import.meta.dirname, '../app.yml'), 'utf8')) as Record<string, unknown>;
      expect(manifest).toMatchObject({
        hook_attributes: { url: 'https://yoke.example.com/api/github/webhooks', active: true },
        // The app's homepage is this yoke, never another app's page.
        url: 'https://yoke.example.com/yoke',
        redirect_url: `http://localhost:${port}/yoke/setup/done`,
        default_permissions: appYml.default_permissions,
        default_events: appYml.default_events,
        public: false,
      });
      expect(page).toMatch(/action="https:\/\/github\.com\/settings\/apps\/new\?state=[0-9a-f]{48}"/);
      expect(page).toContain('GitHub App names are global');
      expect(out).not.toMatch(/smee/i);
      // TR34: whoever reaches the setup page registers yoke's app: with no HOST, yoke itself listens on 127.0.0.1 alone,
      // as the kernel's own table of listening sockets says (0100007F:9903 is 127.0.0.1:39171, the port in hex; state
      // 0A is LISTEN).
      const hex = port.toString(16).toUpperCase().padStart(4, '0');
      const listening = [readFileSync('/proc/net/tcp', 'utf8'), readFileSync('/proc/net/tcp6', 'utf8')]
        .join('\n')
        .split('\n')
        .map((l) => l.trim().split(/\s+/))
        .filter((f) => f[3] === '0A' && f[1]?.endsWith(`:${hex}`))
        .map((f) => f[1]);
      expect(listening).toEqual([`0100007F:${hex}`]);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

const decodeHtml = (s: string) =>
  s
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');

describe('npm start with a webhook proxy', () => {
  it('WEBHOOK_PROXY_URL in .env stops with how to proxy, instead of installing smee-client while running', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'yoke-start-proxy-'));
    writeFileSync(join(dir, '.env'), 'WEBHOOK_PROXY_URL=https://smee.io/abc123\n');
    const child = spawn(process.execPath, [TEST_SERVER], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', HOME: dir, PORT: '39172', YOKE_DB_PATH: join(dir, 'yoke.db') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((done) => child.on('close', done));
    rmSync(dir, { recursive: true, force: true });
    expect({ code, err: err.trimEnd() }).toEqual({
      code: 1,
      err: stops(
        "WEBHOOK_PROXY_URL is set (https://smee.io/abc123), but yoke starts no webhook proxy: Probot would install smee-client from the npm registry while running. Unset it (remove it from .env too), and either point the app's webhook URL at yoke itself (https://<your host>/api/github/webhooks) or run the proxy yourself: `npx smee-client@5.0.0 --url https://smee.io/abc123 --path /api/github/webhooks --port 39172`.",
      ).err,
    });
  });
});

describe('npm start with a store or a port that cannot work', () => {
  const withKey = { ...hosted, PRIVATE_KEY: key };

  it('a YOKE_DB_PATH under /proc stops at once, naming the setting, instead of spinning', async () => {
    expect(await start({ ...withKey, YOKE_DB_PATH: '/proc/yoke/yoke.db' })).toEqual(
      stops(
        "yoke could not open its SQLite store at /proc/yoke/yoke.db: ENOENT: no such file or directory, mkdir '/proc/yoke'. Set YOKE_DB_PATH to a file in a folder yoke may write (it makes the folder), or YOKE_DATABASE_URL to a PostgreSQL database.",
      ),
    );
  });

  it('a YOKE_DB_PATH under a file stops, naming the file and the setting', async () => {
    writeFileSync(join(cwd, 'plain'), 'not a folder');
    const path = join(cwd, 'plain', 'yoke.db');
    expect(await start({ ...withKey, YOKE_DB_PATH: path })).toEqual(
      stops(
        `yoke could not open its SQLite store at ${path}: ${join(cwd, 'plain')} is a file, not a folder. Set YOKE_DB_PATH to a file in a folder yoke may write (it makes the folder), or YOKE_DATABASE_URL to a PostgreSQL database.`,
      ),
    );
  });

  it('a YOKE_DATABASE_URL whose server takes the connection and never answers stops within its timeout, naming the setting', async () => {
    const { createServer } = await import('node:net');
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    try {
      // The URL's connect_timeout bounds the wait, as libpq reads it (without it, 10 s: POSTGRES_DEFAULTS).
      const url = `postgres://yoke:s3cret@127.0.0.1:${port}/yoke?connect_timeout=2`;
      const r = await start({ ...withKey, YOKE_DATABASE_URL: url });
      expect(r).toEqual(
        stops(
          `yoke could not open its PostgreSQL store at postgres://yoke:***@127.0.0.1:${port}/yoke?connect_timeout=2: it took the connection and did not answer within 2 s. Check that YOKE_DATABASE_URL names the PostgreSQL server's host and port (not another service's), and that no firewall holds the connection.`,
        ),
      );
    } finally {
      silent.close();
    }
  }, 30_000);

  it('a YOKE_DATABASE_URL whose connect_timeout is no whole number of seconds stops before connecting, naming it', async () => {
    expect(
      await start({ ...withKey, YOKE_DATABASE_URL: 'postgres://yoke@127.0.0.1:1/yoke?connect_timeout=soon' }),
    ).toEqual(
      stops(
        "The PostgreSQL URL's connect_timeout=soon is not a whole number of seconds: write it as libpq reads it (connect_timeout=10), or leave it out for yoke's 10 s.",
      ),
    );
  });

  it('a PORT that is no port, or one another process holds, stops before yoke says it runs', async () => {
    expect(await start({ ...withKey, PORT: '80800' })).toEqual(stops('PORT: must be a port number, from 1 to 65535'));
    const { createServer } = await import('node:net');
    const holder = createServer();
    await new Promise<void>((r) => holder.listen(39173, r));
    try {
      expect(await start({ ...withKey, PORT: '39173' })).toEqual(
        stops(
          'PORT 39173 is taken: another process listens there (another yoke?). Stop it, or set PORT to a free port.',
        ),
      );
    } finally {
      holder.close();
    }
  });
});
