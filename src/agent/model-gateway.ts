import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { recordOf } from '../kernel/guards.js';

// TR39: the model's key never enters the agent's sandbox. The agent CLI is
// pointed at this gateway, which yoke's runner keeps outside: the CLI holds a
// placeholder, and the gateway puts the job's key on each request as it goes
// on to the model. What the model answers comes back through it too, so it
// counts the tokens each answer billed from a channel no tool in the sandbox
// can write (a tool can print a result line where the CLI's output goes; it
// cannot make the model's answers say anything).

/** What the agent CLI holds where the key would be: it names what holds the key instead. */
export const KEY_PLACEHOLDER = 'yoke-model-gateway-holds-the-key';

/** How the model's answers state what they billed. */
export type ModelApi = 'anthropic' | 'openai';

/** The header the gateway puts on each request: the job's key, which the agent never holds. */
export interface ModelAuth {
  header: 'x-api-key' | 'authorization';
  value: string;
}

/** Tokens as billed: `input` includes the cached and cache-written ones. */
export interface Usage {
  input: number;
  cachedInput: number;
  cacheWrite: number;
  output: number;
}

/** One answer of the model's, as the gateway counted it. */
export interface MeteredAnswer {
  model: string | null;
  usage: Usage;
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);
const str = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);
const obj = (v: unknown): Record<string, unknown> => recordOf(v) ?? {};

/** The JSON documents of a body: the `data:` lines of an event stream, or the body as one document. */
function documents(body: string): unknown[] {
  const out: unknown[] = [];
  const lines = body.split('\n');
  const stream = lines.some((l) => l.startsWith('data:'));
  for (const text of stream ? lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()) : [body]) {
    try {
      out.push(JSON.parse(text));
    } catch {
      /* not JSON ([DONE], a keep-alive, an HTML error page): bills nothing */
    }
  }
  return out;
}

/**
 * What one answer billed, from the body the model sent (an event stream or one JSON document), or null when
 * it billed nothing (an error, a token count). Anthropic's counts in `message_delta` are cumulative; OpenAI's
 * Responses API states the whole answer's in `response.completed` (or `.incomplete`, `.failed`). Pure.
 */
export function answerUsage(api: ModelApi, requestModel: string | null, body: string): MeteredAnswer | null {
  let model = requestModel;
  let seen = false;
  const u = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
  const take = (usage: Record<string, unknown>) => {
    seen = true;
    if ('input_tokens' in usage) u.input = num(usage.input_tokens);
    if (api === 'anthropic') {
      if ('cache_read_input_tokens' in usage) u.cacheRead = num(usage.cache_read_input_tokens);
      if ('cache_creation_input_tokens' in usage) u.cacheWrite = num(usage.cache_creation_input_tokens);
    } else u.cacheRead = num(obj(usage.input_tokens_details).cached_tokens);
    if ('output_tokens' in usage) u.output = num(usage.output_tokens);
  };
  for (const d of documents(body).map(obj)) {
    if (api === 'anthropic') {
      if (d.type === 'message_start') {
        const m = obj(d.message);
        model = str(m.model) ?? model;
        take(obj(m.usage));
      } else if (d.type === 'message_delta' && d.usage) take(obj(d.usage));
      else if (d.type === 'message' && d.usage) {
        model = str(d.model) ?? model;
        take(obj(d.usage));
      }
    } else {
      const r =
        d.object === 'response'
          ? d
          : typeof d.type === 'string' && /^response\.(completed|incomplete|failed)$/.test(d.type)
            ? obj(d.response)
            : null;
      if (r?.usage) {
        model = str(r.model) ?? model;
        take(obj(r.usage));
      }
    }
  }
  if (!seen) return null;
  // Anthropic counts cached and cache-written tokens apart from `input_tokens`; OpenAI's input includes its cached ones.
  const input = api === 'anthropic' ? u.input + u.cacheRead + u.cacheWrite : u.input;
  return { model, usage: { input, cachedInput: u.cacheRead, cacheWrite: u.cacheWrite, output: u.output } };
}

export interface GatewayOptions {
  /** The model's base URL (the vendor's, or the one the job names): requests go on to its origin, path as asked. */
  upstream: URL;
  /** How to read what each answer billed; null reads nothing (an agent of your own). */
  api: ModelApi | null;
  /** The job's key, put on every request in place of whatever the agent sent; null passes the agent's own headers. */
  auth: ModelAuth | null;
  /** Why new requests are refused now (the run's spend limit is reached), or null. */
  refusal?: () => string | null;
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

/** The gateway's answer when it cannot pass a request on, in the shape the agent's API client reads. */
function errorBody(api: ModelApi | null, message: string): string {
  return JSON.stringify(
    api === 'openai'
      ? { error: { message, type: 'invalid_request_error' } }
      : { type: 'error', error: { type: 'invalid_request_error', message } },
  );
}

/** The gateway: an HTTP server on a unix socket outside the sandbox, which the containment proxy relays the model's port to. */
export class ModelGateway {
  readonly answers: MeteredAnswer[] = [];
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly opts: GatewayOptions) {}

  async listen(path: string): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((r) => this.server!.listen(path, r));
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    try {
      for await (const c of req) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(String(c)));
    } catch {
      res.destroy();
      return;
    }
    const { api, auth, upstream } = this.opts;
    const refused = this.opts.refusal?.() ?? null;
    if (refused) {
      res.writeHead(400, { 'content-type': 'application/json' }).end(errorBody(api, refused));
      return;
    }
    const body = Buffer.concat(chunks);
    let requestModel: string | null = null;
    try {
      requestModel = str(obj(JSON.parse(body.toString('utf8'))).model);
    } catch {
      /* not JSON: the answer names its model, or none */
    }
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
    const target = new URL(req.url ?? '/', upstream.origin);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const up = send(target, { method: req.method ?? 'GET', headers }, (answer) => {
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
        if (!api) return;
        const a = answerUsage(api, requestModel, Buffer.concat(kept).toString('utf8'));
        if (a) {
          this.answers.push(a);
          this.opts.onAnswer?.(a);
        }
      });
      answer.on('error', () => res.destroy());
    });
    up.on('error', (err) => {
      if (res.headersSent) res.destroy();
      else
        res
          .writeHead(502, { 'content-type': 'application/json' })
          .end(errorBody(api, `yoke's model gateway could not reach ${target.host}: ${err.message}`));
    });
    up.end(body);
  }
}
