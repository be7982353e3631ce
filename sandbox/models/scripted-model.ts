import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

// A scripted model on loopback, for the real agent CLIs: a fake of the
// Anthropic Messages API (Claude Code, through ANTHROPIC_BASE_URL) and of
// the OpenAI Responses API (Codex, through a model provider). Each request
// is answered by the script: a shell command to run (the agent's tool call),
// or a final message. Every request is kept, so tests can assert on what the
// agent was told.

/** A tool call (with `note`, a text block before it in the same answer, as models often send), or a final message. */
export type ModelStep = { run: string; note?: string } | { say: string };

export interface ModelRequest {
  api: 'anthropic' | 'openai';
  /** The first user prompt the agent sent, as text. */
  prompt: string;
  /** How many tool results came back so far in this conversation. */
  toolResults: number;
  body: Record<string, unknown>;
  /** The credential it came with (`x-api-key`, or `authorization`): the job's key, put on by yoke's model gateway. */
  key: string | null;
}

/** Chooses the next step from what the agent sent. */
export type ModelScript = (req: ModelRequest) => ModelStep;

export interface ScriptedModelOptions {
  script: ModelScript;
  /** Tokens billed per answer (a large count makes a spend limit bite sooner). */
  usage?: { input: number; output: number };
}

const textOf = (content: unknown): string => {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((c: { text?: string; type?: string }) => (typeof c?.text === 'string' ? c.text : '')).join('\n');
};

export class ScriptedModel {
  readonly requests: ModelRequest[] = [];
  private server: Server | null = null;
  url = '';

  constructor(private readonly opts: ScriptedModelOptions) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res).catch(() => res.destroy()));
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  /** The prompts the agents sent, one per conversation (its first request). */
  prompts(): string[] {
    return this.requests.filter((r) => r.toolResults === 0).map((r) => r.prompt);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.method !== 'POST') {
      res.writeHead(200).end();
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    const path = (req.url ?? '').split('?')[0];
    const key = (req.headers['x-api-key'] as string | undefined) ?? req.headers.authorization ?? null;
    if (path === '/v1/messages') return this.anthropic(body, key, res);
    if (path === '/v1/responses') return this.openai(body, key, res);
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
  }

  /** Keeps the request, asks the script, and opens the event stream both APIs answer with. */
  private answer(r: ModelRequest, res: ServerResponse) {
    this.requests.push(r);
    const step = this.opts.script(r);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const ev = (type: string, data: object) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    return { step, n: this.requests.length, u: this.opts.usage ?? { input: 1200, output: 150 }, ev };
  }

  private anthropic(body: Record<string, unknown>, key: string | null, res: ServerResponse): void {
    const messages = (body.messages ?? []) as { role: string; content: unknown }[];
    const firstUser = messages.find((m) => m.role === 'user');
    const toolResults = messages.filter(
      (m) => Array.isArray(m.content) && (m.content as { type?: string }[]).some((c) => c.type === 'tool_result'),
    ).length;
    const r: ModelRequest = { api: 'anthropic', prompt: textOf(firstUser?.content), toolResults, body, key };
    const { step, n, u, ev } = this.answer(r, res);
    ev('message_start', {
      message: {
        id: `msg_${n}`,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: u.input, output_tokens: 0 },
      },
    });
    if ('run' in step) {
      const at = step.note ? 1 : 0;
      if (step.note) {
        ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
        ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: step.note } });
        ev('content_block_stop', { index: 0 });
      }
      ev('content_block_start', {
        index: at,
        content_block: { type: 'tool_use', id: `toolu_${n}`, name: 'Bash', input: {} },
      });
      ev('content_block_delta', {
        index: at,
        delta: {
          type: 'input_json_delta',
          partial_json: JSON.stringify({ command: step.run, description: 'scripted step' }),
        },
      });
      ev('content_block_stop', { index: at });
    } else {
      ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
      ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: step.say } });
      ev('content_block_stop', { index: 0 });
    }
    ev('message_delta', {
      delta: { stop_reason: 'run' in step ? 'tool_use' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: u.output },
    });
    ev('message_stop', {});
    res.end();
  }

  private openai(body: Record<string, unknown>, key: string | null, res: ServerResponse): void {
    const input = (body.input ?? []) as { type?: string; role?: string; content?: unknown }[];
    const users = input.filter((i) => i.type === 'message' && i.role === 'user');
    const toolResults = input.filter((i) => i.type === 'function_call_output').length;
    // Codex sends its environment context as a user message first; the prompt is the last user message before any tool output.
    const r: ModelRequest = { api: 'openai', prompt: textOf(users.at(-1)?.content), toolResults, body, key };
    const { step, n, u, ev } = this.answer(r, res);
    ev('response.created', { response: { id: `resp_${n}` } });
    const item =
      'run' in step
        ? {
            type: 'function_call',
            id: `fc_${n}`,
            call_id: `call_${n}`,
            name: 'exec_command',
            arguments: JSON.stringify({ cmd: step.run }),
          }
        : {
            type: 'message',
            id: `msg_${n}`,
            role: 'assistant',
            content: [{ type: 'output_text', text: step.say, annotations: [] }],
          };
    ev('response.output_item.added', { output_index: 0, item });
    ev('response.output_item.done', { output_index: 0, item });
    ev('response.completed', {
      response: {
        id: `resp_${n}`,
        usage: {
          input_tokens: u.input,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: u.output,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: u.input + u.output,
        },
      },
    });
    res.end();
  }
}
