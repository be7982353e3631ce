import { createSign, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedForge } from '../../sandbox/forge-server.js';

// The embedded forge's HTTP behaviour on its own: app JWT checks, tokens,
// ETags and 304s, pagination links and rate-limit headers.

const app = generateKeyPairSync('rsa', { modulusLength: 2048 });
const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });
const dir = mkdtempSync(join(tmpdir(), 'yoke-forge-'));
let forge: EmbeddedForge;
let api = '';

function appJwt(key = app.privateKey, iss = '7'): string {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const h = enc({ alg: 'RS256', typ: 'JWT' });
  const p = enc({ iat: now - 30, exp: now + 540, iss });
  return `${h}.${p}.${createSign('RSA-SHA256').update(`${h}.${p}`).sign(key).toString('base64url')}`;
}

beforeAll(async () => {
  forge = new EmbeddedForge({
    dataDir: dir,
    appId: 7,
    appSlug: 'yoke-test',
    appPublicKey: app.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  });
  await forge.start();
  api = `${forge.url}/api/v3`;
  const repo = forge.createRepo('acme/lib', { files: { 'README.md': '# lib\n' }, installationId: 3 });
  for (let i = 0; i < 45; i++)
    forge.createIssue(repo, forge.user('maintainer'), `Issue ${i + 1}`, 'body', i % 2 ? ['yoke:afk'] : []);
});

afterAll(async () => {
  await forge.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the embedded forge', () => {
  it('checks the app JWT and issues installation tokens that reach only that installation', async () => {
    expect((await fetch(`${api}/app/installations`)).status).toBe(401);
    expect(
      (await fetch(`${api}/app/installations`, { headers: { authorization: `Bearer ${appJwt(stranger.privateKey)}` } }))
        .status,
    ).toBe(401);
    expect(
      (await fetch(`${api}/app/installations`, { headers: { authorization: `Bearer ${appJwt(app.privateKey, '8')}` } }))
        .status,
    ).toBe(401);
    const installs = (await (
      await fetch(`${api}/app/installations`, { headers: { authorization: `Bearer ${appJwt()}` } })
    ).json()) as { id: number }[];
    expect(installs.map((i) => i.id)).toEqual([3]);
    const tok = await fetch(`${api}/app/installations/3/access_tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${appJwt()}` },
    });
    expect(tok.status).toBe(201);
    const { token } = (await tok.json()) as { token: string };
    const repos = (await (
      await fetch(`${api}/installation/repositories`, { headers: { authorization: `token ${token}` } })
    ).json()) as { repositories: { full_name: string }[] };
    expect(repos.repositories.map((r) => r.full_name)).toEqual(['acme/lib']);
    expect((await fetch(`${api}/repos/acme/lib`, { headers: { authorization: 'token ghs_forged' } })).status).toBe(401);
  });

  it('answers an unchanged GET with 304 to its ETag, which costs no rate limit', async () => {
    const token = forge.personalToken('maintainer');
    const headers = { authorization: `token ${token}` };
    const first = await fetch(`${api}/repos/acme/lib/issues?state=open&per_page=10`, { headers });
    const etag = first.headers.get('etag')!;
    const used = Number(first.headers.get('x-ratelimit-used'));
    expect([first.status, used, first.headers.get('x-ratelimit-limit')]).toEqual([200, 1, '5000']);
    const again = await fetch(`${api}/repos/acme/lib/issues?state=open&per_page=10`, {
      headers: { ...headers, 'if-none-match': etag },
    });
    expect([again.status, Number(again.headers.get('x-ratelimit-used'))]).toEqual([304, 1]);
    forge.createIssue(forge.repos.get('acme/lib')!, forge.user('maintainer'), 'A change', 'body');
    const changed = await fetch(`${api}/repos/acme/lib/issues?state=open&per_page=10`, {
      headers: { ...headers, 'if-none-match': etag },
    });
    expect([changed.status, Number(changed.headers.get('x-ratelimit-used'))]).toEqual([200, 2]);
  });

  it('pages lists with link headers and filters by label', async () => {
    const headers = { authorization: `token ${forge.personalToken('maintainer')}` };
    const page1 = await fetch(`${api}/repos/acme/lib/issues?state=open&labels=yoke%3Aafk&per_page=10`, { headers });
    expect(((await page1.json()) as unknown[]).length).toBe(10);
    const link = page1.headers.get('link')!;
    expect(link).toContain('rel="next"');
    expect(link).toContain('rel="last"');
    const last = /<([^>]+)>; rel="last"/.exec(link)![1]!;
    expect(new URL(last).searchParams.get('page')).toBe('3');
    const tail = (await (await fetch(last, { headers })).json()) as { labels: { name: string }[] }[];
    expect(tail.length).toBe(2);
    expect(tail.every((i) => i.labels.some((l) => l.name === 'yoke:afk'))).toBe(true);
  });
});
