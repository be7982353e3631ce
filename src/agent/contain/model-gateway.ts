import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { answerUsage, outputLimit, readRequest, type MeteredAnswer, type ModelApi } from './model-answers.js';
import type { SpendMeter } from './spend-meter.js';

// TR39: the model's key never enters the agent's sandbox. The agent CLI is
// pointed at this gateway, which yoke's runner keeps outside: the CLI holds a
// placeholder, and the gateway puts the job's key on each request as it goes
// on to the model. What the model answers comes back through it too, so it
// counts the tokens each answer billed from a channel no tool in the sandbox
// can write (a tool can print a result line where the CLI's output goes; it
// cannot make the model's answers say anything).

/** What the agent CLI holds where the key would be: it names what holds the key instead. */
export const KEY_PLACEHOLDER = 'yoke-model-gateway-holds-the-key';

/** The header the gateway puts on each request: the job's key, which the agent never holds. */
export interface ModelAuth {
  header: 'x-api-key' | 'authorization';
  value: string;
}

/** An endpoint the gateway passes on: its path under the upstream's base URL, its method, and whether its answers bill. */
export interface ModelEndpoint {
  method: 'POST' | 'GET';
  path: string;
  metered: boolean;
}

/**
 * TR41: the only requests the gateway passes on, by the API it meters; everything else is refused. Each
 * metered one is an endpoint whose answers the meter reads (`answerUsage`); the unmetered ones bill nothing.
 * Batches, chat completions, embeddings, images and files are not here: their spend the meter cannot read.
 */
export const MODEL_ENDPOINTS: Record<ModelApi, readonly ModelEndpoint[]> = {
  anthropic: [
    { method: 'POST', path: '/v1/messages', metered: true },
    { method: 'POST', path: '/v1/messages/count_tokens', metered: false },
  ],
  openai: [{ method: 'POST', path: '/responses', metered: true }],
};

/** A request the gateway passes on: to the upstream's own origin, whatever the request named. */
export type GatewayRoute =
  { ok: true; target: URL; endpoint: string; metered: boolean } | { ok: false; status: 403 | 404 | 405; why: string };

const SEGMENT = /^[A-Za-z0-9._~-]+$/;
const QUERY = /^[A-Za-z0-9=&_.,~%-]*$/;

/**
 * TR41: where a request goes, or why it goes nowhere. Pure. Only an origin-form target (`/path?query`, one leading
 * slash) whose path is one of the API's endpoints under the upstream's base path passes, with a Host the agent
 * was told; an absolute-form target (`http://elsewhere/`), a `//host` path, dot segments, a foreign Host and any
 * other endpoint are refused. An agent of your own (no API yoke meters) may reach any clean path under the base.
 */
export function routeRequest(
  opts: Pick<GatewayOptions, 'upstream' | 'api' | 'hosts'>,
  method: string,
  url: string,
  host: string | undefined,
): GatewayRoute {
  if (!host || !opts.hosts.some((h) => h.toLowerCase() === host.toLowerCase()))
    return {
      ok: false,
      status: 403,
      why: `yoke's model gateway answers only as ${opts.hosts.join(' or ')}, not as ${host ?? 'no host'}`,
    };
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const query = q < 0 ? '' : url.slice(q + 1);
  const segments = path.split('/').slice(1);
  const clean =
    path.startsWith('/') && segments.every((s) => SEGMENT.test(s) && s !== '.' && s !== '..') && QUERY.test(query);
  const base = opts.upstream.pathname.replace(/\/+$/, '');
  const endpoint = clean ? endpointOf(opts.api, base, method, path) : null;
  if (!endpoint) {
    const allowed = opts.api
      ? MODEL_ENDPOINTS[opts.api].map((e) => `${e.method} ${base}${e.path}`).join(', ')
      : `paths under ${base || '/'}`;
    const shown = url.length > 120 ? `${url.slice(0, 120)}…` : url;
    return {
      ok: false,
      status: clean && endpointOf(opts.api, base, 'POST', path) ? 405 : 404,
      why: `yoke's model gateway passes on only ${allowed}; ${method} ${shown} is refused`,
    };
  }
  const target = new URL(`${opts.upstream.origin}${path}${query ? `?${query}` : ''}`);
  if (target.origin !== opts.upstream.origin)
    return {
      ok: false,
      status: 404,
      why: `yoke's model gateway refuses ${method} ${url}: it leaves ${opts.upstream.origin}`,
    };
  return { ok: true, target, endpoint: `${endpoint.method} ${path}`, metered: endpoint.metered };
}

function endpointOf(api: ModelApi | null, base: string, method: string, path: string): ModelEndpoint | null {
  if (!api) {
    if (method === 'CONNECT' || !(path === base || path.startsWith(`${base}/`))) return null;
    return { method: method === 'GET' ? 'GET' : 'POST', path: path.slice(base.length), metered: false };
  }
  return MODEL_ENDPOINTS[api].find((e) => e.method === method && `${base}${e.path}` === path) ?? null;
}

export interface GatewayOptions {
  /** The model's base URL (the vendor's, or the one the job names): requests go on to its origin, under its path. */
  upstream: URL;
  /** How to read what each answer billed; null reads nothing (an agent of your own). */
  api: ModelApi | null;
  /** The job's key, put on every request in place of whatever the agent sent; null passes the agent's own headers. */
  auth: ModelAuth | null;
  /** The Host values the agent was told to reach the gateway by (`127.0.0.1:<port>`); any other is refused. */
  hosts: readonly string[];
  /** Prices what the answers billed and admits each request (TR39, TR42); null meters nothing (an agent of your own). */
  meter?: SpendMeter | null;
  /** Each answer as it is counted. */
  onAnswer?: (a: MeteredAnswer) => void;
}

/** Headers that belong to one hop, never passed on. */
const HOP = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'accept-encoding',
]);

const ERROR_TYPES = {
  400: 'invalid_request_error',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
} as const;

/** The gateway's answer when it cannot pass a request on, in the shape the agent's API client reads. */
export function errorBody(api: ModelApi | null, status: keyof typeof ERROR_TYPES, message: string): string {
  const type = ERROR_TYPES[status];
  return JSON.stringify(
    api === 'openai' ? { error: { message, type, code: null } } : { type: 'error', error: { type, message } },
  );
}

/** A request the gateway refused, as the run's log names it. */
export interface RefusedRequest {
  request: string;
  why: string;
}

/** The gateway: an HTTP server on a unix socket outside the sandbox, which the containment proxy relays the model's port to. */
export class ModelGateway {
  readonly answers: MeteredAnswer[] = [];
  readonly refused: RefusedRequest[] = [];
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly opts: GatewayOptions) {}

  async listen(path: string): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    // A tunnel (CONNECT) or a protocol switch is no request to the model: refused on the socket, in the API's shape.
    const raw = (req: IncomingMessage, socket: Duplex) => {
      const why = `yoke's model gateway refuses ${req.method} ${req.url}: it passes on only the model's own requests`;
      this.refused.push({ request: `${req.method} ${req.url}`, why });
      const body = errorBody(this.opts.api, 405, why);
      socket.end(
        `HTTP/1.1 405 Method Not Allowed\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
    };
    this.server.on('connect', raw);
    this.server.on('upgrade', raw);
    await new Promise<void>((r) => this.server!.listen(path, r));
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  private refuse(res: ServerResponse, status: keyof typeof ERROR_TYPES, request: string, why: string): void {
    this.refused.push({ request, why });
    res.writeHead(status, { 'content-type': 'application/json' }).end(errorBody(this.opts.api, status, why));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    try {
      for await (const c of req) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(String(c)));
    } catch {
      res.destroy();
      return;
    }
    const { api, auth, meter } = this.opts;
    const method = req.method ?? 'GET';
    const route = routeRequest(this.opts, method, req.url ?? '', req.headers.host);
    if (!route.ok) return this.refuse(res, route.status, `${method} ${req.url ?? ''}`, route.why);
    const body = Buffer.concat(chunks);
    const { model: requestModel, fields: request } = readRequest(body.toString('utf8'));
    const metered = Boolean(api && meter && route.metered);
    const admitted = metered ? await meter!.admit(requestModel, body.length, outputLimit(api!, request)) : null;
    if (admitted && !admitted.ok) return this.refuse(res, 400, route.endpoint, admitted.why);
    const ticket = admitted?.ticket ?? 0;
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP.has(k)) headers[k] = v;
    if (auth) {
      delete headers['x-api-key'];
      delete headers.authorization;
      headers[auth.header] = auth.value;
    }
    // Plain bytes back, so the gateway can read what they billed.
    headers['accept-encoding'] = 'identity';
    headers['content-length'] = String(body.length);
    const { target } = route;
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    let settled = false;
    const settle = (a: MeteredAnswer | null | 'unreadable') => {
      if (settled || !metered) return;
      settled = true;
      meter!.settle(ticket, route.endpoint, a);
    };
    const up = send(target, { method, headers }, (answer) => {
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(answer.headers))
        if (v !== undefined && k !== 'connection' && k !== 'keep-alive' && k !== 'transfer-encoding') out[k] = v;
      res.writeHead(answer.statusCode ?? 502, out);
      const kept: Buffer[] = [];
      answer.on('data', (c: Buffer) => {
        if (api) kept.push(c);
        res.write(c);
      });
      answer.on('end', () => {
        res.end();
        if (!api || !route.metered) return settle(null);
        const a = answerUsage(api, requestModel, Buffer.concat(kept).toString('utf8'));
        if (a) {
          this.answers.push(a);
          this.opts.onAnswer?.(a);
        }
        const ok = (answer.statusCode ?? 500) < 300;
        settle(a ?? (ok ? 'unreadable' : null));
      });
      // An answer cut off may have billed what it streamed: count what came, or stop the run.
      answer.on('error', () => {
        res.destroy();
        const a = api ? answerUsage(api, requestModel, Buffer.concat(kept).toString('utf8')) : null;
        settle(a ?? 'unreadable');
      });
    });
    up.on('error', (err) => {
      settle(null);
      if (res.headersSent) res.destroy();
      else
        res
          .writeHead(502, { 'content-type': 'application/json' })
          .end(errorBody(api, 400, `yoke's model gateway could not reach ${target.host}: ${err.message}`));
    });
    up.end(body);
  }
}
