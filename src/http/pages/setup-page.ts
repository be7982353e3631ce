import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseAppYml } from '../../config/app-yml.js';
import type { CreatedApp } from '../../forge/app-manifest.js';
import { esc } from './dashboard-parts.js';
import { errorText } from '../../kernel/error-text.js';

// yoke's own setup page, served while yoke has no GitHub App yet (no APP_ID,
// no key): it registers one through GitHub's manifest flow from the app.yml
// yoke ships (its permissions and events, wherever yoke runs from), writes the
// credentials GitHub gives back to .env, and says what to add after it.

export interface SetupDeps {
  /** yoke's app.yml, as shipped. */
  appYml: string;
  /** YOKE_PUBLIC_URL (where GitHub sends webhooks), PORT, GHE_HOST, GHE_PROTOCOL. */
  env: Record<string, string | undefined>;
  /** Exchanges the code GitHub hands back for the app's credentials. */
  convert: (code: string, apiBaseUrl: string) => Promise<CreatedApp>;
  /** Writes these settings to .env (keeping the rest); returns the file's path. */
  writeEnv: (vars: Record<string, string>) => string;
  /** The unguessable value GitHub hands back with the code (GitHub's `state`); a random one by default. */
  state?: string;
}

const GITHUB_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;

/**
 * The manifest GitHub creates the app from: app.yml, with the way back here, and this yoke's own address as the
 * app's homepage and webhook. Without YOKE_PUBLIC_URL GitHub cannot reach yoke: the webhook is registered off
 * (yoke polls, and with YOKE_RUNS_REACH=github needs no inbound connection), and the homepage is GitHub's.
 */
export function setupManifest(
  appYml: string,
  at: { webhookUrl: string; backUrl: string; publicUrl: string | undefined; github: string },
): Record<string, unknown> {
  const app = parseAppYml(appYml);
  return {
    name: app.name,
    ...(app.description ? { description: app.description } : {}),
    url: at.publicUrl ? `${at.publicUrl}/yoke` : at.github,
    public: app.public ?? false,
    hook_attributes: { url: at.webhookUrl, active: at.publicUrl !== undefined },
    redirect_url: at.backUrl,
    default_events: app.default_events,
    default_permissions: app.default_permissions,
  };
}

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><title>yoke: ${esc(title)}</title><style>body{font:14px system-ui,sans-serif;margin:2rem;max-width:48rem;color:#222}code{background:#f4f4f4;padding:0 .2em}</style></head><body><h1>${esc(title)}</h1>${body}</body></html>`;

/** The page that registers the app: on the account that signs in on GitHub, or on an organization. */
export function renderSetupPage(p: {
  manifest: Record<string, unknown>;
  createAppUrl: string;
  webhookUrl: string;
  publicUrlSet: boolean;
  org: string | null;
}): string {
  const where = p.org ? `the organization ${esc(p.org)}` : 'your GitHub account';
  const unreachable = p.publicUrlSet
    ? ''
    : `<p>YOKE_PUBLIC_URL is not set, so the app is registered with its webhook off: GitHub could not reach ${esc(p.webhookUrl)}. yoke works without it, polling, and with <code>YOKE_RUNS_REACH=github</code> its runs need no way in either. If GitHub can reach this yoke, set YOKE_PUBLIC_URL to that https address and start yoke again first; or turn the webhook on in the app's settings later.</p>`;
  return page(
    "Register yoke's GitHub App",
    `<p>yoke has no GitHub App yet. This registers one on ${where}, from the <code>app.yml</code> yoke ships: its permissions, the events it receives, and its webhook URL, <code>${esc(p.webhookUrl)}</code>.</p>
${unreachable}<p>GitHub App names are global: GitHub asks for a name next, and <code>${esc(String(p.manifest.name))}</code> is surely taken. Pick one of your own, such as <code>yoke-acme</code>.</p>
<form method="post" action="${esc(p.createAppUrl)}"><input type="hidden" name="manifest" value="${esc(JSON.stringify(p.manifest))}"><button>Register it on ${where}</button></form>
<form method="get" action="/yoke/setup"><p>Or on an organization you own: <input name="org" placeholder="acme" pattern="[A-Za-z0-9][A-Za-z0-9-]{0,38}" required> <button>Use this organization</button></p></form>
<p>Afterwards yoke writes <code>APP_ID</code>, <code>PRIVATE_KEY</code> and <code>WEBHOOK_SECRET</code> to <code>.env</code>, and says what to add before you start it again.</p>`,
  );
}

/** What the page says once GitHub created the app and yoke wrote its credentials. */
export function renderSetupDone(app: CreatedApp, envPath: string, publicUrlSet: boolean): string {
  return page(
    `${app.slug} is registered`,
    `<p>yoke wrote <code>APP_ID</code> (${app.id}), <code>PRIVATE_KEY</code> and <code>WEBHOOK_SECRET</code> to <code>${esc(envPath)}</code>. Keep that file private: the key acts as the app.</p>
<p>Before you start yoke again, add to it:</p>
<ul><li><code>YOKE_API_TOKENS</code>: your operator token, for the dashboard and the CLI: <code>openssl rand -hex 32</code> makes one.</li>
${publicUrlSet ? '' : "<li><code>YOKE_PUBLIC_URL</code>: the https address GitHub's runners reach yoke at.</li>"}</ul>
<p>Then stop this yoke (Ctrl-C), start it again (<code>yoke serve</code>), and <a href="${esc(app.htmlUrl)}/installations/new">install the app</a> on the repositories it may work on. <code>yoke doctor OWNER/REPO</code> checks the rest.</p>`,
  );
}

type Answer = { status: number; body: string; headers?: Record<string, string> };

const registeredAlready = (): Answer => ({
  status: 410,
  body: page(
    'yoke is registered already',
    "<p>yoke's GitHub App was registered from this page, and its credentials are in <code>.env</code>. This page takes no other registration: stop this yoke (Ctrl-C) and start it again (<code>yoke serve</code>).</p>",
  ),
});

const notAnOrganization = (org: string): Answer => ({
  status: 400,
  body: page(
    'Not an organization',
    `<p>${esc(org)} is not a GitHub organization name. <a href="/yoke/setup">Back</a></p>`,
  ),
});

const noCode = (): Answer => ({
  status: 400,
  body: page(
    'No code from GitHub',
    '<p>GitHub comes back here with a code once it created the app. <a href="/yoke/setup">Start again</a>.</p>',
  ),
});

const notThisRegistration = (): Answer => ({
  status: 403,
  body: page(
    'Not the registration this page started',
    '<p>GitHub comes back here with the code and the <code>state</code> this page gave it; this request has not got it, so yoke takes no app from it. <a href="/yoke/setup">Register from this page</a>.</p>',
  ),
});

const registrationUnderWay = (): Answer => ({
  status: 409,
  body: page('A registration is under way', '<p>yoke is taking the app GitHub created. Reload in a moment.</p>'),
});

const noCredentials = (why: string): Answer => ({
  status: 502,
  body: page(
    "GitHub did not give the app's credentials",
    `<p>${esc(why)}</p><p>A code works once and for an hour: <a href="/yoke/setup">register again</a>, or make a private key on the app's settings page and set <code>APP_ID</code>, <code>PRIVATE_KEY_PATH</code> and <code>WEBHOOK_SECRET</code> yourself.</p>`,
  ),
});

const notSetUp = (): Answer => ({
  status: 404,
  body: page(
    'Not set up yet',
    '<p>yoke has no GitHub App yet, so it serves nothing but <a href="/yoke/setup">its setup page</a>.</p>',
  ),
});

/** TR34: a page reached by a name that is not this machine's nor YOKE_PUBLIC_URL's (DNS rebinding) shows nothing. */
const notThisHost = (host: string): Answer => ({
  status: 421,
  body: page(
    'Not served under this name',
    `<p>yoke's setup page answers only at this machine's own address (<code>localhost</code>, <code>127.0.0.1</code>, <code>[::1]</code>) or at the host of YOKE_PUBLIC_URL, not at <code>${esc(host.slice(0, 100))}</code>: a page of another site that made its name point here must not read it. Open it at http://localhost:PORT/yoke/setup on this machine, or set YOKE_PUBLIC_URL to the address you reach it by.</p>`,
  ),
});

/** TR34: the Host values the setup page answers to: loopback names, any port, and YOKE_PUBLIC_URL's host. */
export function setupHostAllowed(host: string | undefined, publicUrl: string | undefined): boolean {
  if (!host) return false;
  const name = host.toLowerCase().replace(/:\d{1,5}$/, '');
  if (name === 'localhost' || name === '127.0.0.1' || name === '[::1]') return true;
  if (!publicUrl) return false;
  try {
    return new URL(publicUrl).host.toLowerCase() === host.toLowerCase();
  } catch {
    return false;
  }
}

/** The one registration this page makes: its `state`, where GitHub is, and how far it got. */
class Registration {
  /** GitHub hands `state` back with the code: a code that comes without this page's state is not the registration it started. */
  readonly state: string;
  /** One registration, once: while it is exchanged, and after, no other code is taken. */
  stage: 'open' | 'exchanging' | 'done' = 'open';
  readonly github: string;
  readonly apiBaseUrl: string;
  readonly publicUrl: string | undefined;

  constructor(private readonly deps: SetupDeps) {
    this.state = deps.state ?? randomBytes(24).toString('hex');
    const proto = deps.env.GHE_PROTOCOL ?? 'https';
    this.github = deps.env.GHE_HOST ? `${proto}://${deps.env.GHE_HOST}` : 'https://github.com';
    this.apiBaseUrl = deps.env.GHE_HOST ? `${this.github}/api/v3` : 'https://api.github.com';
    this.publicUrl = deps.env.YOKE_PUBLIC_URL?.replace(/\/+$/, '');
  }

  /** `/yoke/setup`: the page that registers the app, on the account or an organization. */
  page(url: URL, here: string): Answer {
    const org = url.searchParams.get('org');
    if (org !== null && !GITHUB_NAME.test(org)) return notAnOrganization(org);
    const webhookUrl = `${this.publicUrl ?? here}/api/github/webhooks`;
    return {
      status: 200,
      body: renderSetupPage({
        manifest: setupManifest(this.deps.appYml, {
          webhookUrl,
          backUrl: `${here}/yoke/setup/done`,
          publicUrl: this.publicUrl,
          github: this.github,
        }),
        createAppUrl: `${org ? `${this.github}/organizations/${org}/settings/apps/new` : `${this.github}/settings/apps/new`}?state=${this.state}`,
        webhookUrl,
        publicUrlSet: this.publicUrl !== undefined,
        org,
      }),
    };
  }

  /** `/yoke/setup/done`: GitHub's code, for this page's state, exchanged once for the app's credentials. */
  async done(url: URL): Promise<Answer> {
    const code = url.searchParams.get('code');
    if (!code || !/^[\w-]{1,100}$/.test(code)) return noCode();
    const given = Buffer.from(url.searchParams.get('state') ?? '');
    if (given.length !== Buffer.byteLength(this.state) || !timingSafeEqual(given, Buffer.from(this.state)))
      return notThisRegistration();
    if (this.stage !== 'open') return registrationUnderWay();
    this.stage = 'exchanging';
    let app: CreatedApp;
    try {
      app = await this.deps.convert(code, this.apiBaseUrl);
    } catch (err) {
      this.stage = 'open';
      return noCredentials(errorText(err));
    }
    const path = this.deps.writeEnv({
      APP_ID: String(app.id),
      PRIVATE_KEY: app.pem,
      ...(app.webhookSecret ? { WEBHOOK_SECRET: app.webhookSecret } : {}),
    });
    this.stage = 'done';
    return { status: 200, body: renderSetupDone(app, path, this.publicUrl !== undefined) };
  }
}

/** Serves the setup flow: `/` and `/probot` lead to `/yoke/setup`; GitHub comes back to `/yoke/setup/done`. */
export function createSetupHandler(deps: SetupDeps): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const registration = new Registration(deps);
  const send = (res: ServerResponse, a: Answer) => {
    res.writeHead(a.status, {
      'content-type': 'text/html; charset=utf-8',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
      ...a.headers,
    });
    res.end(a.body);
  };
  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!setupHostAllowed(req.headers.host, registration.publicUrl))
      return send(res, notThisHost(req.headers.host ?? ''));
    if (registration.stage === 'done') return send(res, registeredAlready());
    // Where the browser reached this yoke: GitHub sends it back here.
    const here = `${req.headers['x-forwarded-proto'] === 'https' ? 'https' : 'http'}://${req.headers.host ?? `localhost:${deps.env.PORT ?? 3000}`}`;
    if (req.method !== 'GET') return send(res, notSetUp());
    if (url.pathname === '/' || url.pathname === '/probot' || url.pathname === '/yoke')
      return send(res, { status: 302, body: '', headers: { location: '/yoke/setup' } });
    if (url.pathname === '/yoke/setup') return send(res, registration.page(url, here));
    if (url.pathname === '/yoke/setup/done') return send(res, await registration.done(url));
    return send(res, notSetUp());
  };
}
