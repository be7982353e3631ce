import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseOperatorEnv } from '../src/config/env.js';

// deploy/: the example of two yokes behind a load balancer on one PostgreSQL.
// No container runs here; what can be checked without one is: both yokes are
// one definition on the same database, the balancer reaches both, the
// settings they are given are ones yoke takes, and the image starts yoke as
// `npm start` does.

const DIR = join(import.meta.dirname, '..', 'deploy');
const read = (f: string) => readFileSync(join(DIR, f), 'utf8');

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
    const env = Object.fromEntries(
      read('yoke.env.example')
        .split('\n')
        .filter((l) => l && !l.startsWith('#'))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
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

  it('builds an image that starts yoke as npm start does', () => {
    const pkg = JSON.parse(readFileSync(join(DIR, '..', 'package.json'), 'utf8')) as { scripts: { start: string } };
    const cmd = JSON.parse(/^CMD (.*)$/m.exec(read('Dockerfile'))![1]!) as string[];
    expect(cmd.join(' ')).toBe(pkg.scripts.start);
    expect(yokes['yoke-a']!.build).toEqual({ context: '..', dockerfile: 'deploy/Dockerfile' });
  });
});
