import { recordOf } from '../../kernel/guards.js';

// TR39: what the model's answers billed, read from the answers themselves (a
// channel no tool in the sandbox writes), and what a request asks for.

/** How the model's answers state what they billed. */
export type ModelApi = 'anthropic' | 'openai';

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

/** The output limit a request names, by the API's own field, or null. */
export function outputLimit(api: ModelApi, request: Record<string, unknown>): number | null {
  const v = api === 'anthropic' ? request.max_tokens : request.max_output_tokens;
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : null;
}

/** A request's JSON body and the model it names; a body that is not JSON names none. */
export function readRequest(body: string): { model: string | null; fields: Record<string, unknown> } {
  try {
    const fields = obj(JSON.parse(body));
    return { model: str(fields.model), fields };
  } catch {
    return { model: null, fields: {} };
  }
}
