import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { meteredCost } from '../../src/agent/agent-output.js';
import { answerUsage, ModelGateway, type MeteredAnswer } from '../../src/agent/model-gateway.js';
import { DEFAULT_PRICES, priceTokens } from '../../src/agent/prices.js';
import { tempFolders } from './helpers.js';

// TR39: the model's key stays outside the sandbox with the gateway, which
// puts it on each request and counts what each answer billed.

const tmp = tempFolders();
const sse = (events: object[]) =>
  events.map((e) => `event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`).join('');

describe('what an answer billed, as the model stated it (TR39)', () => {
  it("TR39 Anthropic's event stream: the message_start's input and cache counts, and the last cumulative output count", () => {
    const body = sse([
      {
        type: 'message_start',
        message: {
          model: 'claude-sonnet-4-5-20250929',
          usage: {
            input_tokens: 100,
            cache_read_input_tokens: 2000,
            cache_creation_input_tokens: 300,
            output_tokens: 1,
          },
        },
      },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 40 } },
      { type: 'message_delta', delta: {}, usage: { output_tokens: 75 } },
      { type: 'message_stop' },
    ]);
    expect(answerUsage('anthropic', 'claude-x', body)).toEqual({
      model: 'claude-sonnet-4-5-20250929',
      usage: { input: 2400, cachedInput: 2000, cacheWrite: 300, output: 75 },
    });
  });

  it("TR39 OpenAI's Responses stream: the completed response's usage, its cached tokens among the input; the request's model when the answer names none", () => {
    const body = sse([
      { type: 'response.created', response: { id: 'r1' } },
      {
        type: 'response.completed',
        response: {
          id: 'r1',
          usage: { input_tokens: 5000, input_tokens_details: { cached_tokens: 4000 }, output_tokens: 120 },
        },
      },
    ]);
    expect(answerUsage('openai', 'gpt-5.5', body)).toEqual({
      model: 'gpt-5.5',
      usage: { input: 5000, cachedInput: 4000, cacheWrite: 0, output: 120 },
    });
  });

  it('TR39 one JSON answer counts; an error, a token count and a page that is not JSON bill nothing', () => {
    expect(
      answerUsage(
        'anthropic',
        null,
        JSON.stringify({ type: 'message', model: 'claude-haiku-4-5', usage: { input_tokens: 10, output_tokens: 5 } }),
      ),
    ).toEqual({ model: 'claude-haiku-4-5', usage: { input: 10, cachedInput: 0, cacheWrite: 0, output: 5 } });
    expect(answerUsage('anthropic', null, JSON.stringify({ input_tokens: 900 }))).toBeNull();
    expect(
      answerUsage('anthropic', null, JSON.stringify({ type: 'error', error: { type: 'overloaded_error' } })),
    ).toBeNull();
    expect(answerUsage('openai', null, '<html>502 Bad Gateway</html>')).toBeNull();
  });

  it('TR39 a dated model name is priced as its family; cache reads and writes at their own prices', () => {
    expect(
      priceTokens(DEFAULT_PRICES, 'claude-sonnet-4-5-20250929', {
        input: 1_000_000 + 1_000_000 + 1_000_000,
        cachedInput: 1_000_000,
        cacheWrite: 1_000_000,
        output: 1_000_000,
      }),
    ).toBe(3 + 0.3 + 3.75 + 15);
    expect(priceTokens(DEFAULT_PRICES, 'claude-unknown-9', { input: 1, cachedInput: 0, output: 1 })).toBeNull();
  });
});

describe("the run's cost from what the gateway counted (TR39)", () => {
  const answer = (model: string | null, input: number, output: number): MeteredAnswer => ({
    model,
    usage: { input, cachedInput: 0, cacheWrite: 0, output },
  });
  const prices = { ok: true as const, table: DEFAULT_PRICES };

  it("TR39 TR37 the counted answers are the cost, whatever the agent's output stated", () => {
    const stated = { usd: 0, inputTokens: 0, outputTokens: 0, note: null };
    expect(
      meteredCost([answer('claude-opus-5-5', 1200, 150), answer('claude-opus-5-5', 1200, 150)], stated, prices, null),
    ).toEqual({ usd: 0.0156, inputTokens: 2400, outputTokens: 300, note: null });
    // Nothing went through the gateway: nothing was billed to the key, whatever was printed.
    expect(meteredCost([], { usd: 100_000, inputTokens: 1, outputTokens: 1, note: null }, prices, 5)).toBeNull();
  });

  it('TR39 the counted cost is recorded whole past the limit (the answer that crossed it was billed); a fallback figure is capped at it (TR37)', () => {
    const crossed = [answer('gpt-5.5', 60_000, 2_000), answer('gpt-5.5', 60_000, 2_000)];
    expect(meteredCost(crossed, null, prices, 0.15)).toEqual({
      usd: 0.19,
      inputTokens: 120_000,
      outputTokens: 4_000,
      note: null,
    });
    const forged = { usd: 100_000, inputTokens: 0, outputTokens: 0, note: null };
    expect(meteredCost([answer('claude-new-9', 10, 1)], forged, prices, 5)).toEqual({
      usd: 5,
      inputTokens: 10,
      outputTokens: 1,
      note: "the agent's output stated $100000, past the run's limit of $5: recorded at the limit",
    });
  });

  it("TR39 a model yoke cannot price falls back to the agent's own figure, and says so", () => {
    const stated = { usd: 0.3, inputTokens: 9, outputTokens: 9, note: null };
    expect(meteredCost([answer('claude-new-9', 1000, 10)], stated, prices, null)).toEqual({
      usd: 0.3,
      inputTokens: 1000,
      outputTokens: 10,
      note: "no price is known for claude-new-9 (set YOKE_MODEL_PRICES to price it): the dollar figure is the agent's own",
    });
    expect(
      meteredCost(
        [answer('claude-new-9', 1000, 10)],
        null,
        { ok: false, error: 'YOKE_MODEL_PRICES is not JSON' },
        null,
      ),
    ).toEqual({
      usd: null,
      inputTokens: 1000,
      outputTokens: 10,
      note: 'YOKE_MODEL_PRICES is not JSON: tokens only',
    });
  });
});

describe('the gateway, with a real upstream (TR39)', () => {
  let close: (() => Promise<void>) | null = null;
  afterEach(async () => {
    await close?.();
    close = null;
  });

  async function upstreamAndGateway(opts: { refusal?: () => string | null } = {}) {
    const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
    const up = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(
          sse([
            { type: 'message_start', message: { model: 'claude-opus-5-5', usage: { input_tokens: 1200 } } },
            { type: 'message_delta', delta: {}, usage: { output_tokens: 150 } },
          ]),
        );
      });
    });
    await new Promise<void>((r) => up.listen(0, '127.0.0.1', r));
    const counted: MeteredAnswer[] = [];
    const gw = new ModelGateway({
      upstream: new URL(`http://127.0.0.1:${(up.address() as { port: number }).port}`),
      api: 'anthropic',
      auth: { header: 'x-api-key', value: 'sk-ant-the-real-key' },
      onAnswer: (a) => counted.push(a),
      ...opts,
    });
    const sock = join(tmp('yoke-gw-'), 'model.sock');
    await gw.listen(sock);
    close = async () => {
      await gw.close();
      up.close();
    };
    const ask = (headers: Record<string, string>) =>
      new Promise<{ status: number; body: string }>((done, fail) => {
        const r = request({ socketPath: sock, path: '/v1/messages?beta=true', method: 'POST', headers }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString('utf8')));
          res.on('end', () => done({ status: res.statusCode ?? 0, body }));
        });
        r.on('error', fail);
        r.end(JSON.stringify({ model: 'claude-opus-5-5', messages: [] }));
      });
    return { seen, counted, gw, ask };
  }

  it("TR39 a request with a key of the agent's own (or a stolen one) reaches the model with the job's key only; the answer passes through whole and is counted", async () => {
    const { seen, counted, ask } = await upstreamAndGateway();
    const r = await ask({
      'content-type': 'application/json',
      'x-api-key': 'yoke-model-gateway-holds-the-key',
      authorization: 'Bearer sk-ant-someone-elses',
      'accept-encoding': 'gzip, br',
    });
    expect(r.status).toBe(200);
    expect(r.body).toContain('"output_tokens":150');
    expect(seen).toHaveLength(1);
    expect(seen[0]!.url).toBe('/v1/messages?beta=true');
    expect(seen[0]!.headers['x-api-key']).toBe('sk-ant-the-real-key');
    expect(seen[0]!.headers.authorization).toBeUndefined();
    expect(seen[0]!.headers['accept-encoding']).toBe('identity');
    expect(counted).toEqual([
      { model: 'claude-opus-5-5', usage: { input: 1200, cachedInput: 0, cacheWrite: 0, output: 150 } },
    ]);
  });

  it("TR39 past the run's spend limit the gateway passes nothing on, and says why in the API's own error shape", async () => {
    const { seen, ask } = await upstreamAndGateway({ refusal: () => "yoke: this run's spend limit of $1 is reached" });
    const r = await ask({ 'content-type': 'application/json' });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: "yoke: this run's spend limit of $1 is reached" },
    });
    expect(seen).toEqual([]);
  });
});
