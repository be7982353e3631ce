import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { meteredCost } from '../../src/agent/agent-output.js';
import { errorBody, ModelGateway, routeRequest } from '../../src/agent/contain/model-gateway.js';
import { answerUsage, type MeteredAnswer, type ModelApi } from '../../src/agent/contain/model-answers.js';
import { SpendMeter, unpricedModel } from '../../src/agent/contain/spend-meter.js';
import { DEFAULT_PRICES, priceTokens } from '../../src/agent/contain/prices.js';
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
    // Nothing went through the gateway: nothing was billed to the key, whatever was printed, and the run says so (BU02).
    expect(meteredCost([], { usd: 100_000, inputTokens: 1, outputTokens: 1, note: null }, prices, 5)).toEqual({
      usd: 0,
      inputTokens: 0,
      outputTokens: 0,
      note: null,
    });
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

const HOST = '127.0.0.1:8879';
const listening = async (server: Server): Promise<number> => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as { port: number }).port;
};

describe('what the gateway passes on: the endpoints it meters, to the upstream only (TR41)', () => {
  const anthropic = { upstream: new URL('https://api.anthropic.com'), api: 'anthropic' as const, hosts: [HOST] };
  const openai = { upstream: new URL('https://api.openai.com/v1'), api: 'openai' as const, hosts: [HOST] };

  it("TR41 the agents' own requests pass, to the upstream's origin under its base path", () => {
    const a = routeRequest(anthropic, 'POST', '/v1/messages?beta=true', HOST);
    expect(a).toMatchObject({ ok: true, endpoint: 'POST /v1/messages', metered: true });
    expect(a.ok && a.target.href).toBe('https://api.anthropic.com/v1/messages?beta=true');
    expect(routeRequest(anthropic, 'POST', '/v1/messages/count_tokens', HOST)).toMatchObject({
      ok: true,
      metered: false,
    });
    const o = routeRequest(
      openai,
      'POST',
      '/v1/responses',
      'LOCALHOST:8879'.toLowerCase().replace('localhost', '127.0.0.1'),
    );
    expect(o.ok && o.target.href).toBe('https://api.openai.com/v1/responses');
  });

  it.each([
    ['//attacker.example:9/x', 'POST', HOST],
    ['http://attacker.example:9/v1/messages', 'POST', HOST],
    ['https://api.anthropic.com/v1/messages', 'POST', HOST],
    ['/v1/messages/../../x', 'POST', HOST],
    ['/v1/messages/%2e%2e/x', 'POST', HOST],
    ['/v1//messages', 'POST', HOST],
    ['/v1/messages/batches', 'POST', HOST],
    ['/v1/complete', 'POST', HOST],
    ['/v1/files', 'POST', HOST],
    ['/v1/messages', 'GET', HOST],
    ['/v1/messages', 'CONNECT', HOST],
    ['/v1/messages#x', 'POST', HOST],
    ['/v1/messages?x=@attacker.example/', 'POST', HOST],
    ['/v1/messages', 'POST', 'attacker.example'],
    ['/v1/messages', 'POST', '127.0.0.1:8879.attacker.example'],
    ['/v1/messages', 'POST', undefined],
  ])('TR41 %s by %s with Host %s is refused, for Anthropic', (url, method, host) => {
    expect(routeRequest(anthropic, method, url, host)).toMatchObject({ ok: false });
  });

  it.each([
    '/v1/chat/completions',
    '/v1/embeddings',
    '/v1/images/generations',
    '/v1/batches',
    '/responses',
    '/v1/responses/x',
  ])('TR41 OpenAI %s, whose spend the meter cannot read, is refused', (url) => {
    expect(routeRequest(openai, 'POST', url, HOST)).toMatchObject({ ok: false, status: 404 });
  });

  it('TR41 an agent of your own (no API yoke meters) reaches clean paths under its base on the upstream, and nowhere else', () => {
    const own = { upstream: new URL('https://models.corp.example/llm'), api: null, hosts: [HOST] };
    const r = routeRequest(own, 'POST', '/llm/v2/generate', HOST);
    expect(r.ok && r.target.href).toBe('https://models.corp.example/llm/v2/generate');
    for (const url of ['//attacker.example/llm/x', 'http://attacker.example/llm/x', '/llm/../x', '/other'])
      expect(routeRequest(own, 'POST', url, HOST), url).toMatchObject({ ok: false });
    expect(routeRequest(own, 'CONNECT', '/llm/x', HOST)).toMatchObject({ ok: false });
  });

  it("TR41 a refusal reads as the API's own error, naming what passes", () => {
    const r = routeRequest(anthropic, 'POST', '/v1/messages/batches', HOST);
    expect(r).toEqual({
      ok: false,
      status: 404,
      why: "yoke's model gateway passes on only POST /v1/messages, POST /v1/messages/count_tokens; POST /v1/messages/batches is refused",
    });
    expect(JSON.parse(errorBody('anthropic', 404, 'no'))).toEqual({
      type: 'error',
      error: { type: 'not_found_error', message: 'no' },
    });
    expect(JSON.parse(errorBody('openai', 403, 'no'))).toEqual({
      error: { message: 'no', type: 'permission_error', code: null },
    });
  });
});

describe('the gateway, with a real upstream and an attacker listening (TR39, TR41, TR42)', () => {
  const closers: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of closers.splice(0)) await c();
  });

  /** A model that answers every request after `delayMs`, billing `input` and `output` tokens of `model`. */
  async function upstreamAndGateway(
    opts: {
      api?: ModelApi;
      model?: string;
      delayMs?: number;
      maxUsd?: number | null;
      answer?: string;
    } = {},
  ) {
    const api = opts.api ?? 'anthropic';
    const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
    const up = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      req.resume();
      req.on('end', () =>
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          const input = 1200;
          const output = 150;
          res.end(
            opts.answer ??
              (api === 'anthropic'
                ? sse([
                    {
                      type: 'message_start',
                      message: { model: opts.model ?? 'claude-opus-5-5', usage: { input_tokens: input } },
                    },
                    { type: 'message_delta', delta: {}, usage: { output_tokens: output } },
                  ])
                : sse([
                    {
                      type: 'response.completed',
                      response: {
                        model: opts.model ?? 'gpt-5.5',
                        usage: { input_tokens: input, output_tokens: output },
                      },
                    },
                  ])),
          );
        }, opts.delayMs ?? 0),
      );
    });
    const upPort = await listening(up);
    // Whatever reaches this server left the gateway for a host the agent named: it must never see a request, let alone the key.
    const stolen: { url: string; headers: IncomingHttpHeaders }[] = [];
    const attacker = createServer((req, res) => {
      stolen.push({ url: req.url ?? '', headers: req.headers });
      res.end('attacker-answered');
    });
    attacker.on('connect', (req, socket) => {
      stolen.push({ url: req.url ?? '', headers: req.headers });
      socket.end('HTTP/1.1 200 Connection Established\r\n\r\n');
    });
    const attackerPort = await listening(attacker);
    const counted: MeteredAnswer[] = [];
    const stops: string[] = [];
    const meter = new SpendMeter({
      prices: { ok: true, table: DEFAULT_PRICES },
      maxUsd: opts.maxUsd ?? null,
      onStop: (why) => stops.push(why),
    });
    const gw = new ModelGateway({
      upstream: new URL(`http://127.0.0.1:${upPort}${api === 'openai' ? '/v1' : ''}`),
      api,
      auth: { header: 'x-api-key', value: 'sk-ant-the-real-key' },
      hosts: [HOST],
      meter,
      onAnswer: (a) => counted.push(a),
    });
    const sock = join(tmp('yoke-gw-'), 'model.sock');
    await gw.listen(sock);
    closers.push(async () => {
      await gw.close();
      up.closeAllConnections();
      up.close();
      attacker.closeAllConnections();
      attacker.close();
    });
    const ask = (headers: Record<string, string>, o: { path?: string; method?: string; body?: object } = {}) =>
      new Promise<{ status: number; body: string }>((done, fail) => {
        const r = request(
          {
            socketPath: sock,
            path: o.path ?? '/v1/messages?beta=true',
            method: o.method ?? 'POST',
            headers: { host: HOST, ...headers },
            setHost: false,
          },
          (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString('utf8')));
            res.on('end', () => done({ status: res.statusCode ?? 0, body }));
          },
        );
        r.on('error', fail);
        r.end(JSON.stringify(o.body ?? { model: 'claude-opus-5-5', max_tokens: 1000, messages: [] }));
      });
    /** Bytes as an attacker writes them on the socket, not as a client library would: the gateway's whole answer. */
    const raw = (text: string) =>
      new Promise<string>((done, fail) => {
        const c = connect(sock);
        let got = '';
        c.on('data', (d) => (got += d.toString('utf8')));
        c.on('end', () => done(got));
        c.on('close', () => done(got));
        c.on('error', fail);
        c.end(text);
      });
    return { seen, stolen, counted, stops, meter, gw, ask, raw, attackerPort };
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

  it("TR41 a `//host` path, an absolute-form target, a CONNECT tunnel, an upgrade and a foreign Host, written raw on the socket, reach neither the attacker nor the model, and are answered in the API's error shape", async () => {
    const { seen, stolen, raw, gw, attackerPort } = await upstreamAndGateway();
    const at = `127.0.0.1:${attackerPort}`;
    const body = '{"model":"claude-opus-5-5","max_tokens":10}';
    const post = (target: string, host = HOST) =>
      `POST ${target} HTTP/1.1\r\nHost: ${host}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`;
    const answers = [
      await raw(post(`//${at}/v1/messages`)),
      await raw(post(`http://${at}/v1/messages`)),
      await raw(post('/v1/messages', at)),
      await raw(`CONNECT ${at} HTTP/1.1\r\nHost: ${at}\r\n\r\n`),
      await raw(`GET /v1/messages HTTP/1.1\r\nHost: ${HOST}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`),
    ];
    expect(stolen).toEqual([]);
    expect(seen).toEqual([]);
    expect(answers.map((a) => a.split('\r\n')[0])).toEqual([
      'HTTP/1.1 404 Not Found',
      'HTTP/1.1 404 Not Found',
      'HTTP/1.1 403 Forbidden',
      'HTTP/1.1 405 Method Not Allowed',
      'HTTP/1.1 405 Method Not Allowed',
    ]);
    for (const a of answers)
      expect(
        JSON.parse(a.slice(a.indexOf('\r\n\r\n') + 4).replace(/^[0-9a-f]+\r\n|\r\n0\r\n\r\n$/g, '')),
      ).toMatchObject({ type: 'error' });
    expect(gw.refused.map((r) => r.request)).toEqual([
      `POST //${at}/v1/messages`,
      `POST http://${at}/v1/messages`,
      'POST /v1/messages',
      `CONNECT ${at}`,
      'GET /v1/messages',
    ]);
  });

  it('TR42 a model the price table cannot price is refused before the model is asked, and the run is told to stop, naming the model and the setting', async () => {
    const { seen, ask, stops } = await upstreamAndGateway();
    const r = await ask({}, { body: { model: 'claude-mythos-9', max_tokens: 100, messages: [] } });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body).error.message).toBe(unpricedModel('claude-mythos-9'));
    expect(stops).toEqual([unpricedModel('claude-mythos-9')]);
    expect(seen).toEqual([]);
    // And nothing passes after: not even a priced model's request.
    expect((await ask({})).status).toBe(400);
    expect(seen).toEqual([]);
  });

  it('TR42 an answer that names a model the table cannot price (a priced request answered by another model) stops the run', async () => {
    const { ask, stops, meter } = await upstreamAndGateway({ model: 'claude-mythos-9' });
    expect((await ask({})).status).toBe(200);
    expect(stops).toEqual([unpricedModel('claude-mythos-9')]);
    expect(meter.spent).toBe(0);
  });

  it('TR42 a successful answer the meter cannot read stops the run: its spend cannot be counted', async () => {
    const { ask, stops } = await upstreamAndGateway({ answer: '{"id":"msg_1","content":[]}' });
    expect((await ask({})).status).toBe(200);
    expect(stops).toEqual([
      "yoke could not read what the model's answer to POST /v1/messages billed, so its spend cannot be counted: the run is stopped",
    ]);
  });

  it('TR42 parallel requests wait for the meter: ten sent at once against a limit one answer crosses pass on one at a time, and none after the limit is reached', async () => {
    // Each answer bills 1,200 in and 150 out at claude-opus-5-5's price: $0.0078. The limit is $0.01: the second crosses it.
    const { seen, ask, meter } = await upstreamAndGateway({ delayMs: 30, maxUsd: 0.01 });
    const answers = await Promise.all(Array.from({ length: 10 }, () => ask({})));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(2);
    expect(seen).toHaveLength(2);
    expect(meter.spent).toBeCloseTo(0.0156, 6);
    expect(JSON.parse(answers.find((a) => a.status === 400)!.body).error.message).toBe(
      "yoke: this run's spend limit of $0.01 is reached ($0.0156 spent)",
    );
  });
});
