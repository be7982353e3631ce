import { z } from 'zod';
import { jsonLine, type AgentAdapter, type AgentOutcome } from './adapter.js';
import { priceTable, priceTokens } from '../contain/prices.js';
import { KEY_PLACEHOLDER } from '../contain/model-gateway.js';

// Codex 0.171.0, headless: `codex exec --json` prints one event a line;
// `turn.completed` carries token counts, which yoke prices from a per-model
// table. It has neither a turn nor a spend flag: the runner counts its items
// against the turn limit and checks the spend after each turn. Codex ignores
// OPENAI_BASE_URL; given one, the runner writes a model provider for it.

/** The model Codex runs when the job names none (CODEX_MODEL). */
export const CODEX_DEFAULT_MODEL = 'gpt-5.5';

const Item = z.object({ type: z.string(), text: z.string().optional(), message: z.string().optional() }).passthrough();
const Event = z.discriminatedUnion('type', [
  z.object({ type: z.literal('item.completed'), item: Item }).passthrough(),
  z.object({
    type: z.literal('turn.completed'),
    usage: z
      .object({
        input_tokens: z.number().default(0),
        cached_input_tokens: z.number().default(0),
        output_tokens: z.number().default(0),
      })
      .passthrough(),
  }),
  z.object({ type: z.literal('turn.failed'), error: z.object({ message: z.string() }).passthrough() }).passthrough(),
  z.object({ type: z.literal('error'), message: z.string() }).passthrough(),
]);

/** Items that are the agent's own steps (each a model round trip); `error` items are Codex's warnings. */
const STEPS = new Set(['command_execution', 'file_change', 'mcp_tool_call', 'web_search', 'agent_message']);

const modelOf = (env: Record<string, string | undefined>) => env.CODEX_MODEL || CODEX_DEFAULT_MODEL;

export const codex: AgentAdapter = {
  name: 'codex',
  binary: 'codex',
  pkg: '@openai/codex@0.171.0',
  credentials: ['CODEX_API_KEY'],
  passthrough: ['CODEX_MODEL'],
  modelUrlVariable: 'OPENAI_BASE_URL',
  defaultModelUrl: 'https://api.openai.com/v1',
  modelApi: 'openai',
  modelAuth(env) {
    if (!env.CODEX_API_KEY) return null;
    return {
      auth: { header: 'authorization', value: `Bearer ${env.CODEX_API_KEY}` },
      placeholders: { CODEX_API_KEY: KEY_PLACEHOLDER },
    };
  },
  invocation(prompt, _limits, home, env) {
    // Its own sandbox stays on; its network switch is opened because yoke's sandbox (contain.ts) filters every connection.
    const args = [
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--ephemeral',
      '-s',
      'workspace-write',
      '-c',
      'sandbox_workspace_write.network_access=true',
      '-m',
      modelOf(env),
    ];
    const files: Record<string, string> = {};
    const base = env.OPENAI_BASE_URL;
    if (base) {
      args.push('-c', 'model_provider="yoke"');
      files['config.toml'] = [
        '[model_providers.yoke]',
        'name = "yoke"',
        `base_url = ${JSON.stringify(base)}`,
        'env_key = "CODEX_API_KEY"',
        'wire_api = "responses"',
        '',
      ].join('\n');
    }
    args.push(prompt);
    return { args, env: { CODEX_HOME: home }, files };
  },
  parseLine(line) {
    const j = jsonLine(line);
    const ev = j && Event.safeParse(j);
    if (!ev?.success) return null;
    if (ev.data.type === 'turn.completed') return { priced: true };
    if (ev.data.type !== 'item.completed') return null;
    const item = ev.data.item;
    if (!STEPS.has(item.type)) return null;
    return { turn: true, ...(item.type === 'agent_message' && item.text ? { message: item.text } : {}) };
  },
  outcome(stdout, exit, env): AgentOutcome {
    let input = 0;
    let cached = 0;
    let output = 0;
    let turns = 0;
    let last = '';
    let failure: string | null = null;
    for (const line of stdout.split('\n')) {
      const j = jsonLine(line);
      const ev = j && Event.safeParse(j);
      if (!ev?.success) continue;
      const e = ev.data;
      if (e.type === 'turn.completed') {
        turns++;
        input += e.usage.input_tokens;
        cached += e.usage.cached_input_tokens;
        output += e.usage.output_tokens;
      } else if (e.type === 'turn.failed') failure = `turn.failed: ${e.error.message}`;
      else if (e.type === 'error') failure = `error: ${e.message}`;
      else if (e.item.type === 'agent_message' && e.item.text) last = e.item.text;
    }
    const prices = priceTable(env.YOKE_MODEL_PRICES);
    const model = modelOf(env);
    const usd = prices.ok ? priceTokens(prices.table, model, { input, cachedInput: cached, output }) : null;
    const note = !prices.ok
      ? prices.error
      : usd === null
        ? `no price is known for ${model}: tokens only (set YOKE_MODEL_PRICES to price it)`
        : null;
    const cost = turns || input || output ? { usd, inputTokens: input, outputTokens: output, note } : null;
    if (!failure && turns === 0)
      failure = exit.signal
        ? `stopped (${exit.signal}) before its turn completed`
        : `exited with code ${exit.code} before its turn completed`;
    if (!failure && exit.code !== 0) failure = `exited with code ${exit.code}`;
    return { ok: failure === null, reason: failure, message: last || failure || '', cost };
  },
};
