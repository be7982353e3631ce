import { createServer, request, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import { convertAppManifest } from '../../src/forge/app-manifest.js';
import { createSetupHandler, type SetupDeps } from '../../src/http/pages/setup-page.js';
import { writeDotEnv } from '../../src/server.js';
import { isolateNock } from '../helpers/nock.js';

// yoke's setup page, from GitHub's side: the code GitHub hands back is
// exchanged (nock answers as GitHub's OpenAPI says), the credentials land in
// .env, and the page says what to add before yoke starts again.

// The page's own server is on loopback; every request to GitHub is mocked, and every mock used.
isolateNock();
const APP_YML = readFileSync(join(import.meta.dirname, '../../app.yml'), 'utf8');
const STATE = 'the-state-this-page-gave-github-0123';
const PEM = '-----BEGIN RSA PRIVATE KEY-----\nabc\ndef\n-----END RSA PRIVATE KEY-----\n';
let server: Server | null = null;
const dir = mkdtempSync(join(tmpdir(), 'yoke-setup-'));
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = null;
});

async function serve(env: SetupDeps['env'], writeEnv: SetupDeps['writeEnv']): Promise<string> {
  const handler = createSetupHandler({ appYml: APP_YML, env, convert: convertAppManifest, writeEnv, state: STATE });
  server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

describe("yoke's setup page", () => {
  it('exchanges the code GitHub hands back for the credentials, writes them to .env, and says what to add', async () => {
    nock('https://api.github.com')
      .post('/app-manifests/c0de-1/conversions')
      .reply(201, {
        id: 4242,
        slug: 'yoke-acme',
        node_id: 'A_1',
        name: 'yoke-acme',
        pem: PEM,
        webhook_secret: 'w'.repeat(40),
        client_id: 'Iv1.x',
        client_secret: 'y',
        html_url: 'https://github.com/apps/yoke-acme',
      });
    nock.enableNetConnect('127.0.0.1');
    const envPath = join(dir, '.env');
    writeFileSync(envPath, 'LOG_LEVEL=debug\nAPP_ID=old\n');
    const base = await serve({ YOKE_PUBLIC_URL: 'https://yoke.example.com' }, (vars) => writeDotEnv(envPath, vars));
    const res = await fetch(`${base}/yoke/setup/done?code=c0de-1&state=${STATE}`);
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('<h1>yoke-acme is registered</h1>');
    expect(page).toContain(`to <code>${envPath}</code>`);
    expect(page).toContain('<a href="https://github.com/apps/yoke-acme/installations/new">install the app</a>');
    expect(page).toContain('<code>YOKE_API_TOKENS</code>');
    // YOKE_PUBLIC_URL is set already: the page does not ask for it.
    expect(page).not.toContain('<li><code>YOKE_PUBLIC_URL</code>');
    // The file keeps its other settings, replaces APP_ID, and reads back as the key GitHub gave.
    const written = parseEnv(readFileSync(envPath, 'utf8'));
    expect(written).toEqual({ LOG_LEVEL: 'debug', APP_ID: '4242', PRIVATE_KEY: PEM, WEBHOOK_SECRET: 'w'.repeat(40) });
    expect(statSync(envPath).mode & 0o777).toBe(0o600);
  });

  it('says so when GitHub refuses the code, and writes nothing', async () => {
    nock('https://ghe.example.com').post('/api/v3/app-manifests/used/conversions').reply(404, { message: 'Not Found' });
    nock.enableNetConnect('127.0.0.1');
    let wrote = false;
    const base = await serve({ GHE_HOST: 'ghe.example.com' }, () => ((wrote = true), ''));
    const res = await fetch(`${base}/yoke/setup/done?code=used&state=${STATE}`);
    expect(res.status).toBe(502);
    expect(await res.text()).toContain('A code works once and for an hour');
    expect(wrote).toBe(false);
    // Without YOKE_PUBLIC_URL the app is registered with its webhook off, and the page says why, and that yoke works so.
    const page = await (await fetch(`${base}/yoke/setup?org=acme`)).text();
    expect(page).toContain(`action="https://ghe.example.com/organizations/acme/settings/apps/new?state=${STATE}"`);
    expect(page).toContain(
      'YOKE_PUBLIC_URL is not set, so the app is registered with its webhook off: GitHub could not reach',
    );
    const manifest = JSON.parse(
      (/name="manifest" value="([^"]*)"/.exec(page)?.[1] ?? '{}').replaceAll('&quot;', '"').replaceAll('&amp;', '&'),
    ) as { hook_attributes: { active: boolean }; url: string };
    expect([manifest.hook_attributes.active, manifest.url]).toEqual([false, 'https://ghe.example.com']);
    expect((await fetch(`${base}/yoke/setup?org=no%20such`)).status).toBe(400);
    expect((await fetch(`${base}/yoke/setup/done`)).status).toBe(400);
    expect((await fetch(`${base}/yoke/api/fleet`)).status).toBe(404);
  });

  it("TR34 a page of another site whose name was made to point here (DNS rebinding) reads nothing: the setup page answers only at loopback names or YOKE_PUBLIC_URL's host", async () => {
    const handler = createSetupHandler({
      appYml: APP_YML,
      env: { YOKE_PUBLIC_URL: 'https://yoke.acme.example' },
      convert: async () => {
        throw new Error('never asked');
      },
      writeEnv: () => '/srv/yoke/.env',
    });
    nock.enableNetConnect('127.0.0.1');
    server = createServer((req, res) => void handler(req, res));
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const get = (host: string) =>
      new Promise<{ status: number; body: string }>((done, fail) => {
        const r = request({ host: '127.0.0.1', port, path: '/yoke/setup', headers: { host } }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString('utf8')));
          res.on('end', () => done({ status: res.statusCode ?? 0, body }));
        });
        r.on('error', fail);
        r.end();
      });
    for (const host of [
      'evil.example',
      `evil.example:${port}`,
      '127.0.0.1.evil.example',
      'yoke.acme.example.evil.example',
    ]) {
      const r = await get(host);
      expect([r.status, r.body.includes('state=')], host).toEqual([421, false]);
      expect(r.body).toContain('<h1>Not served under this name</h1>');
    }
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `[::1]:${port}`,
      'yoke.acme.example',
      'YOKE.acme.example',
    ]) {
      const r = await get(host);
      expect([r.status, r.body.includes('state=')], host).toEqual([200, true]);
    }
  });

  it('TR34 takes no code that comes without the state it gave GitHub, converts one registration only, and closes once registered', async () => {
    let converted = 0;
    let wrote = 0;
    const handler = createSetupHandler({
      appYml: APP_YML,
      env: {},
      convert: async () => {
        converted++;
        return {
          id: 7,
          slug: 'yoke-acme',
          pem: PEM,
          webhookSecret: 'w'.repeat(40),
          htmlUrl: 'https://github.com/apps/yoke-acme',
        };
      },
      writeEnv: () => (wrote++, '/srv/yoke/.env'),
    });
    nock.enableNetConnect('127.0.0.1');
    server = createServer((req, res) => void handler(req, res));
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    // The page's own state, random, goes to GitHub with the form.
    const page = await (await fetch(`${base}/yoke/setup`)).text();
    const state = /settings\/apps\/new\?state=([0-9a-f]{48})"/.exec(page)?.[1];
    expect(state).toMatch(/^[0-9a-f]{48}$/);
    // An outsider's code, with no state, another, or one a character off: nothing converted, nothing written.
    for (const q of [
      'code=theirs',
      'code=theirs&state=',
      'code=theirs&state=abc',
      `code=theirs&state=${state!.slice(0, -1)}${state!.endsWith('0') ? '1' : '0'}`,
    ]) {
      const res = await fetch(`${base}/yoke/setup/done?${q}`);
      expect(res.status, q).toBe(403);
      expect(await res.text()).toContain('<h1>Not the registration this page started</h1>');
    }
    expect([converted, wrote]).toEqual([0, 0]);
    const ok = await fetch(`${base}/yoke/setup/done?code=ours&state=${state}`);
    expect(ok.status).toBe(200);
    expect([converted, wrote]).toEqual([1, 1]);
    // Registered: no second code is taken, even with the state, and the page is closed.
    for (const path of [`/yoke/setup/done?code=again&state=${state}`, '/yoke/setup', '/']) {
      const res = await fetch(`${base}${path}`, { redirect: 'manual' });
      expect(res.status, path).toBe(410);
      expect(await res.text()).toContain('<h1>yoke is registered already</h1>');
    }
    expect([converted, wrote]).toEqual([1, 1]);
  });
});
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
