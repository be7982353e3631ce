import { createHash, createPublicKey, verify as verifySignature, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpError } from '../http-error.js';
import { GitHubLimits, type Counted } from './limits.js';
import type { ForgeUser } from './state.js';

// The forge's HTTP layer, shared by the sandbox and the bench: routing by
// GitHub's path templates, authentication (app JWTs and tokens), ETags with
// 304 answers that cost no rate limit, rate-limit headers and pagination.
// What the routes do lives in routes-*.ts.

export type AuthKind = 'app' | 'installation' | 'user' | 'workflow' | 'none';

export interface Ctx {
  params: Record<string, string>;
  query: URLSearchParams;
  body: Record<string, unknown>;
  actor: ForgeUser | null;
  auth: AuthKind;
  installationId: number | null;
  /** A workflow token's repository; it reaches no other. */
  tokenRepo: string | null;
  /** Whether a workflow token may write (its job's permissions). */
  writes: boolean;
  accept: string;
  /** The bearer the request came with (DELETE /installation/token revokes it). */
  token: string | null;
}

export type Answer = { status: number; body?: unknown; headers?: Record<string, string>; raw?: string };
export type Handler = (ctx: Ctx) => Answer | Promise<Answer>;

export interface RouteDef {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  auth: 'app' | 'repo' | 'none';
}

/** A request outside the REST API (the Actions OIDC endpoints), answered as is. */
export type RawHandler = (url: URL, req: IncomingMessage) => { status: number; body: unknown } | null;

export interface Credentials {
  /** A stored token's holder, or undefined. */
  credential(token: string):
    | {
        kind: 'installation' | 'user' | 'workflow';
        user: ForgeUser;
        installationId: number | null;
        expiresAt: number;
        repo?: string;
        write?: boolean;
        scope?: { repos: string[]; permissions: Record<string, string> };
      }
    | undefined;
}

export interface ForgeHttpOptions {
  appId: number;
  appPublicKey: string;
  credentials: Credentials;
  now: () => number;
  /** Added before every answer, as a distant GitHub would (the bench sets it). */
  latencyMs?: number;
  /** How many repositories an installation holds: its primary rate limit grows with them. */
  repositories?: (installationId: number) => number;
}

export interface ForgeHttpStats {
  requests: number;
  /** Requests being answered now, and the most there ever were at once. */
  inFlight: number;
  maxInFlight: number;
  notModified: number;
  /** Answers that counted against the rate limit. */
  rateLimited: number;
  /** Each answer; `auth` is who asked, for API routes (the bench tells yoke's requests from the runs'); `installation`, whose limits it counted against. */
  log: { method: string; path: string; status: number; auth?: AuthKind; installation?: number }[];
}

export class ForgeHttp {
  readonly routes: (RouteDef & { re: RegExp; keys: string[]; handler: Handler })[] = [];
  /** Every response served, for tests that check shapes against GitHub's description. */
  readonly served: { method: string; route: string; status: number; body: unknown; request: unknown }[] = [];
  recordResponses = false;
  readonly stats: ForgeHttpStats = {
    requests: 0,
    inFlight: 0,
    maxInFlight: 0,
    notModified: 0,
    rateLimited: 0,
    log: [],
  };
  private raw = new Map<string, RawHandler>();
  private appKey: KeyObject;
  private server: Server | null = null;
  url = '';

  /** GitHub's rate limits, enforced (limits.ts). */
  readonly limits: GitHubLimits;

  constructor(private readonly opts: ForgeHttpOptions) {
    this.appKey = createPublicKey(opts.appPublicKey);
    this.limits = new GitHubLimits(opts.now, opts.repositories ?? (() => 0));
  }

  apiUrl(path: string): string {
    return `${this.url}/api/v3${path}`;
  }

  on(method: RouteDef['method'], path: string, auth: RouteDef['auth'], handler: Handler): void {
    const keys: string[] = [];
    const re = new RegExp(
      '^' +
        path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, (_m, k: string) => {
          keys.push(k);
          return k === 'path' ? '(.+)' : '([^/]+)';
        }) +
        '$',
    );
    this.routes.push({ method, path, auth, re, keys, handler });
  }

  /** Git over HTTP (`/owner/repo.git/...`), answered before the API. */
  git:
    | ((
        req: IncomingMessage,
        url: URL,
        body: Buffer,
      ) => Promise<{ status: number; headers: Record<string, string>; body: Buffer } | null>)
    | null = null;

  /** The web pages people follow links to (issues, PRs, workflow runs), answered after git and the raw routes. */
  pages: ((pathname: string) => string | null) | null = null;

  onRaw(path: string, handler: RawHandler): void {
    this.raw.set(path, handler);
  }

  /** Bytes served under a path prefix to whoever holds the URL (a signed download link); null answers 404. */
  private binary: { prefix: string; handler: (url: URL) => { contentType: string; body: Buffer } | null }[] = [];
  onBinary(prefix: string, handler: (url: URL) => { contentType: string; body: Buffer } | null): void {
    this.binary.push({ prefix, handler });
  }

  /** One page of a list, with GitHub's `link` header. */
  page<T>(ctx: Ctx, items: T[], path: string): Answer {
    const { items: body, headers } = this.pageOf(ctx, items, path);
    return { status: 200, body, headers };
  }

  /** The items of one page of a list, and its `link` header: for lists whose items are shaped a page at a time. */
  pageOf<T>(ctx: Ctx, items: T[], path: string): { items: T[]; headers: Record<string, string> } {
    const per = Math.min(100, Math.max(1, Number(ctx.query.get('per_page') ?? 30)));
    const page = Math.max(1, Number(ctx.query.get('page') ?? 1));
    const last = Math.max(1, Math.ceil(items.length / per));
    const headers: Record<string, string> = {};
    const link = (p: number, rel: string) => {
      const q = new URLSearchParams(ctx.query);
      q.set('page', String(p));
      q.set('per_page', String(per));
      return `<${this.apiUrl(path)}?${q}>; rel="${rel}"`;
    };
    const links = [];
    if (page < last) links.push(link(page + 1, 'next'), link(last, 'last'));
    if (page > 1) links.push(link(1, 'first'), link(page - 1, 'prev'));
    if (links.length) headers.link = links.join(', ');
    return { items: items.slice((page - 1) * per, page * per), headers };
  }

  resetStats(): void {
    Object.assign(this.stats, { requests: 0, inFlight: 0, maxInFlight: 0, notModified: 0, rateLimited: 0, log: [] });
  }

  private authenticate(
    req: IncomingMessage,
  ): Pick<Ctx, 'actor' | 'auth' | 'installationId' | 'tokenRepo' | 'writes'> & { scoped?: boolean } {
    const h = req.headers.authorization ?? '';
    const m = /^(?:token|bearer)\s+(.+)$/i.exec(h);
    const none = { tokenRepo: null, writes: false };
    if (!m) return { actor: null, auth: 'none', installationId: null, ...none };
    const cred = m[1]!.trim();
    const stored = this.opts.credentials.credential(cred);
    if (stored) {
      if (stored.expiresAt < this.opts.now()) throw new HttpError(401, 'Bad credentials');
      return {
        actor: stored.user,
        auth: stored.kind,
        installationId: stored.installationId,
        tokenRepo: stored.repo ?? null,
        writes: stored.write ?? false,
        scoped:
          stored.scope !== undefined &&
          stored.scope.permissions.contents === 'write' &&
          Object.keys(stored.scope.permissions).every((k) => k === 'contents' || k === 'metadata'),
      };
    }
    if (cred.split('.').length === 3 && this.verifyAppJwt(cred))
      return { actor: null, auth: 'app', installationId: null, ...none };
    throw new HttpError(401, 'Bad credentials');
  }

  /** The app's JWT: signed by its key, naming it, and current by GitHub's clock (whose refusals say so, as GitHub's do). */
  private verifyAppJwt(jwt: string): boolean {
    const [h, p, s] = jwt.split('.') as [string, string, string];
    let claims: { iss?: string | number; exp?: number; iat?: number };
    try {
      const ok = verifySignature('RSA-SHA256', Buffer.from(`${h}.${p}`), this.appKey, Buffer.from(s, 'base64url'));
      claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as typeof claims;
      if (!ok || String(claims.iss) !== String(this.opts.appId)) return false;
    } catch {
      return false;
    }
    // GitHub's words, which Octokit's app auth reads to retry with GitHub's clock (its Date header).
    const now = Math.floor(this.opts.now() / 1000);
    if ((claims.exp ?? 0) <= now - 30)
      throw new HttpError(
        401,
        "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires",
      );
    if ((claims.iat ?? 0) > now + 60)
      throw new HttpError(
        401,
        "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued",
      );
    return true;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://forge.local');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    if (this.opts.latencyMs) await new Promise((r) => setTimeout(r, this.opts.latencyMs));
    const method = (req.method ?? 'GET').toUpperCase();
    this.stats.requests++;
    let asked: AuthKind | undefined;
    let counted: Counted | null = null;
    const send = (status: number, body: unknown, headers: Record<string, string> = {}, raw?: string) => {
      const installation = counted && 'installationId' in counted ? { installation: counted.installationId } : {};
      this.stats.log.push({ method, path: url.pathname, status, ...(asked ? { auth: asked } : {}), ...installation });
      // GitHub's Date and its timestamps come from one clock (yoke's probes list what changed since an answer's date).
      res.writeHead(status, { date: new Date(this.opts.now()).toUTCString(), ...headers });
      res.end(raw ?? (body === undefined ? '' : JSON.stringify(body)));
    };

    const gitAnswer = this.git ? await this.git(req, url, Buffer.concat(chunks)) : null;
    if (gitAnswer) {
      this.stats.log.push({ method, path: url.pathname, status: gitAnswer.status });
      res.writeHead(gitAnswer.status, gitAnswer.headers);
      res.end(gitAnswer.body);
      return;
    }
    const bytes = this.binary.find((b) => url.pathname.startsWith(b.prefix));
    if (bytes && method === 'GET') {
      const got = bytes.handler(url);
      this.stats.log.push({ method, path: url.pathname, status: got ? 200 : 404 });
      res.writeHead(got ? 200 : 404, { 'content-type': got?.contentType ?? 'text/plain' });
      res.end(got?.body ?? 'Not Found');
      return;
    }
    const rawHandler = this.raw.get(url.pathname);
    if (rawHandler) {
      const answer = rawHandler(url, req);
      return answer
        ? send(answer.status, answer.body, { 'content-type': 'application/json' })
        : send(401, { message: 'Bad credentials' });
    }
    // GitHub's GraphQL endpoint (Octokit asks /api/graphql of a server whose REST API is at /api/v3): routed as
    // `POST /graphql`, with the same authentication.
    const graphql = url.pathname === '/api/graphql';
    if (!url.pathname.startsWith('/api/v3/') && !graphql) {
      const html = method === 'GET' ? (this.pages?.(url.pathname) ?? null) : null;
      if (html !== null) {
        this.stats.log.push({ method, path: url.pathname, status: 200 });
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(html);
        return;
      }
      return send(404, { message: 'Not Found' }, { 'content-type': 'application/json' });
    }
    const path = graphql ? '/graphql' : url.pathname.slice('/api/v3'.length);
    // Literal segments win over parameters (issues/comments is not issue "comments").
    const route = this.routes
      .filter((r) => r.method === method && r.re.test(path))
      .sort((a, b) => a.keys.length - b.keys.length)[0];
    const common: Record<string, string> = {
      'content-type': 'application/json; charset=utf-8',
      'x-github-media-type': 'github.v3; format=json',
    };
    try {
      if (!route) throw new HttpError(404, 'Not Found');
      const who = this.authenticate(req);
      asked = who.auth;
      if (route.auth === 'app' && who.auth !== 'app') throw new HttpError(401, 'A JSON web token could not be decoded');
      if (route.auth === 'repo' && (who.auth === 'none' || who.auth === 'app'))
        throw new HttpError(401, 'Requires authentication');
      // A token scoped to `contents: write` (a run's push token) writes git, never issues, PRs or workflows.
      // Any installation token may revoke itself.
      if (who.scoped && method !== 'GET' && !(method === 'DELETE' && path === '/installation/token'))
        throw new HttpError(403, 'Resource not accessible by integration');
      const m = route.re.exec(path)!;
      const params = Object.fromEntries(route.keys.map((k, i) => [k, decodeURIComponent(m[i + 1]!)]));
      let body: Record<string, unknown> = {};
      if (text) {
        try {
          body = JSON.parse(text) as Record<string, unknown>;
        } catch {
          throw new HttpError(400, 'Problems parsing JSON');
        }
      }
      const bearer = /^(?:token|bearer)\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim() ?? null;
      // GitHub's limits, counted for the installation a token belongs to (or the credential itself).
      counted =
        who.auth === 'installation' && who.installationId !== null
          ? { installationId: who.installationId }
          : { credential: req.headers.authorization ?? 'anon' };
      const admitted = this.limits.admit(counted, method, route.path);
      const ctx = {
        params,
        query: url.searchParams,
        body,
        ...who,
        accept: String(req.headers.accept ?? ''),
        token: bearer,
      };
      const answer = await Promise.resolve(route.handler(ctx)).finally(() => admitted.done());
      const payload = answer.raw ?? (answer.body === undefined ? '' : JSON.stringify(answer.body));
      const etag = `"${createHash('sha1').update(payload).digest('hex')}"`;
      if (this.recordResponses)
        this.served.push({
          method,
          route: route.path,
          status: answer.status,
          body: answer.raw ?? answer.body,
          request: text ? body : undefined,
        });
      if (method === 'GET' && answer.status === 200 && req.headers['if-none-match'] === etag) {
        // A 304 does not count against the primary rate limit.
        this.stats.notModified++;
        return send(304, undefined, { etag, ...this.limits.headers(counted) });
      }
      this.limits.count(counted);
      this.stats.rateLimited++;
      if (answer.status === 204) return send(204, undefined, this.limits.headers(counted));
      send(
        answer.status,
        answer.body,
        { ...common, ...this.limits.headers(counted), ...(method === 'GET' ? { etag } : {}), ...answer.headers },
        answer.raw,
      );
    } catch (err) {
      const status =
        err instanceof HttpError
          ? err.status
          : typeof (err as { status?: unknown }).status === 'number'
            ? (err as { status: number }).status
            : 500;
      const message = err instanceof Error ? err.message : String(err);
      if (this.recordResponses && route)
        this.served.push({ method, route: route.path, status, body: { message }, request: undefined });
      if (process.env.YOKE_FORGE_DEBUG)
        console.error(`forge: ${method} ${url.pathname}${url.search} -> ${status} ${message}`);
      // A refusal for a rate limit says which (its own headers win); any other answer says what is left.
      const limitHeaders =
        counted && !(err instanceof HttpError && err.headers['retry-after']) ? this.limits.headers(counted) : {};
      const own = err instanceof HttpError ? err.headers : {};
      send(
        status,
        { message, documentation_url: 'https://docs.github.com/rest', status: String(status) },
        { ...common, ...limitHeaders, ...own },
      );
    }
  }

  async start(port = 0): Promise<string> {
    this.server = createServer((req, res) => {
      this.stats.inFlight++;
      this.stats.maxInFlight = Math.max(this.stats.maxInFlight, this.stats.inFlight);
      res.once('close', () => this.stats.inFlight--);
      this.handle(req, res).catch((err) => {
        res.writeHead(500);
        res.end(String(err));
      });
    });
    await new Promise<void>((r) => this.server!.listen(port, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections?.();
    await new Promise<void>((r) => this.server!.close(() => r()));
    this.server = null;
  }
}
