import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseOperatorEnv, runsAudienceOf } from '../src/config/env.js';
import { hostingProblems } from '../src/config/hosting-checks.js';
import { buildCli } from '../src/cli/main.js';
import { STOP_WAIT_MS } from '../src/ticks.js';

// deploy/: one yoke on the embedded store (single.yaml), and two yokes behind
// a load balancer on one PostgreSQL (compose.yaml), from one image. What can
// be checked without a container runtime is checked here: the settings they
// are given are ones yoke takes, the image runs the packed yoke's `yoke
// serve`, the store sits on a volume. With a runtime (`docker info` answers),
// the one-process recipe is also built and started.

const DIR = join(import.meta.dirname, '..', 'deploy');
const read = (f: string) => readFileSync(join(DIR, f), 'utf8');
const envFile = (f: string) =>
  Object.fromEntries(
    read(f)
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  environment?: Record<string, string>;
  env_file?: string;
  depends_on?: Record<string, { condition: string }> | string[];
}

describe('the compose example', () => {
  const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, Service> };
  const { postgres, lb, ...yokes } = compose.services;

  it('runs two yokes from one definition, on the one PostgreSQL it starts, once that is ready', () => {
    expect(Object.keys(yokes)).toEqual(['yoke-a', 'yoke-b']);
    expect(yokes['yoke-b']).toEqual(yokes['yoke-a']);
    const pg = postgres!.environment!;
    expect(yokes['yoke-a']!.environment!.YOKE_DATABASE_URL).toBe(
      `postgres://${pg.POSTGRES_USER}:${pg.POSTGRES_PASSWORD}@postgres:5432/${pg.POSTGRES_DB}`,
    );
    expect(yokes['yoke-a']!.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
  });

  it('gives them settings yoke takes: the example env file and the compose environment parse', () => {
    const env = envFile('yoke.env.example');
    const parsed = parseOperatorEnv({ ...env, ...yokes['yoke-a']!.environment });
    expect(parsed.ok ? parsed.settings.database : parsed.problems).toBe('postgres://yoke:yoke@postgres:5432/yoke');
  });

  it('balances across both yokes on the port they listen on', () => {
    const port = yokes['yoke-a']!.environment!.PORT;
    const upstream = /upstream yoke \{([^}]*)\}/.exec(read('nginx.conf'))![1]!;
    expect([...upstream.matchAll(/server (\S+?)(?: |;)/g)].map((m) => m[1])).toEqual([
      `yoke-a:${port}`,
      `yoke-b:${port}`,
    ]);
    expect(lb!.depends_on).toEqual(['yoke-a', 'yoke-b']);
  });

  it('builds its yokes from the one image', () => {
    expect(yokes['yoke-a']!.build).toEqual({ context: '..', dockerfile: 'deploy/Dockerfile' });
  });
});

describe('the systemd template (yoke@.service)', () => {
  const unit = read('yoke@.service');
  const setting = (key: string) => [...unit.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1]);

  it('runs `yoke serve` per instance, each on its own port, with the settings of the example env file and a PostgreSQL', () => {
    expect(setting('ExecStart')).toEqual(['/usr/bin/env yoke serve']);
    expect(buildCli({ out: () => {}, err: () => {}, env: {}, fetch }).commands.map((c) => c.name())).toContain('serve');
    expect(setting('Environment')).toEqual(['PORT=300%i']);
    expect(setting('EnvironmentFile')).toEqual(['/etc/yoke/yoke.env']);
    // Its comment installs the example env file there; with a PostgreSQL set, yoke takes the settings.
    expect(unit).toContain('install -D -m 600 deploy/yoke.env.example /etc/yoke/yoke.env');
    const parsed = parseOperatorEnv({
      ...envFile('yoke.env.example'),
      YOKE_DATABASE_URL: 'postgres://yoke@db/yoke',
      PORT: '3001',
    });
    expect(parsed.ok ? parsed.settings.database : parsed.problems).toBe('postgres://yoke@db/yoke');
  });

  it('waits for a stop longer than yoke takes to give its lead and reading up', () => {
    expect(Number(setting('TimeoutStopSec')[0])).toBeGreaterThan(STOP_WAIT_MS / 1000);
  });
});

describe('the image', () => {
  const dockerfile = read('Dockerfile');

  it("runs `yoke serve` of the packed package, installed at the lockfile's versions with no dev packages", () => {
    const cmd = JSON.parse(/^CMD (.*)$/m.exec(dockerfile)![1]!) as string[];
    expect(cmd).toEqual(['yoke', 'serve']);
    expect(buildCli({ out: () => {}, err: () => {}, env: {}, fetch }).commands.map((c) => c.name())).toContain('serve');
    expect(dockerfile).toMatch(/^RUN npm pack /m);
    expect(dockerfile).toMatch(/^COPY --from=pack \/tmp\/package\/ \.\/$/m);
    expect(dockerfile).toMatch(
      /^RUN npm ci --omit=dev .*&& ln -s \/opt\/yoke\/bin\/yoke\.js \/usr\/local\/bin\/yoke$/m,
    );
  });

  it('keeps the embedded store on its volume', () => {
    expect(/^ENV .*YOKE_DB_PATH=(\S+)/m.exec(dockerfile)?.[1]).toBe('/data/yoke.db');
    expect(dockerfile).toMatch(/^VOLUME \/data$/m);
  });

  it("leaves the checkout's own node_modules, build and secrets out of what it builds from", () => {
    const ignored = readFileSync(join(DIR, '..', '.dockerignore'), 'utf8').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.git', 'deploy/*.env', 'deploy/*.pem']));
  });
});

describe('the one-process recipe (single.yaml)', () => {
  const single = parse(read('single.yaml')) as {
    services: Record<string, Service & { volumes: string[]; ports: string[] }>;
    volumes: Record<string, unknown>;
  };

  it('runs one yoke from the image, its store on a named volume, its settings from an env file, its key mounted read-only', () => {
    expect(Object.keys(single.services)).toEqual(['yoke']);
    const yoke = single.services.yoke!;
    expect(yoke.build).toEqual({ context: '..', dockerfile: 'deploy/Dockerfile' });
    expect(yoke.env_file).toBe('yoke.env');
    expect(yoke.volumes).toEqual(['./yoke-app.pem:/run/secrets/yoke-app.pem:ro', 'yoke-data:/data']);
    expect(Object.keys(single.volumes)).toEqual(['yoke-data']);
    expect(yoke.ports).toEqual(['3000:3000']);
  });

  it('takes the settings of its example env file, on the embedded store, with runs reaching yoke through GitHub', () => {
    const env = { ...envFile('single.env.example'), YOKE_DB_PATH: '/data/yoke.db' };
    const parsed = parseOperatorEnv(env);
    expect(
      parsed.ok
        ? [parsed.settings.database, parsed.settings.runsReach, runsAudienceOf(parsed.settings)]
        : parsed.problems,
    ).toEqual(['/data/yoke.db', 'github', 'yoke-app-123456']);
    // No public URL to set: nothing refuses the start for the want of one.
    expect(
      hostingProblems(
        env,
        () => '',
        () => undefined,
      ).filter((p) => p.includes('YOKE_PUBLIC_URL')),
    ).toEqual([]);
  });

  it('says the same as one `docker run` line: the same env file, key and volume', () => {
    const line = /^#\s+(docker run .*)$/m.exec(read('single.yaml'))?.[1];
    expect(line).toBe(
      'docker run --env-file deploy/yoke.env -v "$PWD/deploy/yoke-app.pem:/run/secrets/yoke-app.pem:ro" -v yoke-data:/data -p 3000:3000 yoke',
    );
  });

  const docker = spawnSync('docker', ['info'], { stdio: 'ignore' }).status === 0;
  it('builds and starts, and its yoke answers on the published port with its setup page', async (ctx) => {
    if (!docker) ctx.skip('no container runtime here: `docker info` did not answer, so the image is not built');
    const root = join(DIR, '..');
    const built = spawnSync('docker', ['build', '-q', '-f', 'deploy/Dockerfile', '-t', 'yoke-test', '.'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(built.status, built.stderr).toBe(0);
    const started = spawnSync('docker', ['run', '-d', '--rm', '-p', '127.0.0.1:39180:3000', 'yoke-test'], {
      encoding: 'utf8',
    });
    expect(started.status, started.stderr).toBe(0);
    const id = started.stdout.trim();
    try {
      await expect
        .poll(
          () =>
            fetch('http://127.0.0.1:39180/yoke/setup').then(
              (r) => r.status,
              () => 0,
            ),
          { timeout: 60_000, interval: 500 },
        )
        .toBe(200);
    } finally {
      spawnSync('docker', ['stop', id], { stdio: 'ignore' });
    }
  }, 600_000);
});
