import { z } from 'zod';
import { jsonLine, type AgentAdapter, type AgentOutcome } from './adapter.js';
import { KEY_PLACEHOLDER } from '../contain/model-gateway.js';

// Claude Code 2.1.332, headless: `claude -p` with `--output-format
// stream-json`, one JSON event a line, the last of which is the result with
// `total_cost_usd` and `usage`. It has `--max-budget-usd` but no turn flag,
// so the runner counts its assistant messages and stops it past the limit.

const Usage = z
  .object({
    input_tokens: z.number().default(0),
    output_tokens: z.number().default(0),
    cache_creation_input_tokens: z.number().default(0),
    cache_read_input_tokens: z.number().default(0),
  })
  .passthrough();

const Result = z
  .object({
    type: z.literal('result'),
    subtype: z.string(),
    is_error: z.boolean(),
    result: z.string().optional(),
    errors: z.array(z.string()).optional(),
    total_cost_usd: z.number().optional(),
    usage: Usage.optional(),
    num_turns: z.number().optional(),
    /** Per model, the whole run's tokens: `usage` is only the last answer's when the run stops on a limit. */
    modelUsage: z
      .record(
        z.string(),
        z
          .object({
            inputTokens: z.number().default(0),
            outputTokens: z.number().default(0),
            cacheReadInputTokens: z.number().default(0),
            cacheCreationInputTokens: z.number().default(0),
          })
          .passthrough(),
      )
      .optional(),
  })
  .passthrough();

const Assistant = z.object({
  type: z.literal('assistant'),
  message: z
    .object({
      id: z.string().optional(),
      content: z.array(z.object({ type: z.string(), text: z.string().optional() }).passthrough()),
    })
    .passthrough(),
});

/** The tools the agent may use: it edits files and runs commands in its checkout, nothing else. */
export const CLAUDE_TOOLS = 'Bash Edit Write Read Glob Grep';

export const claudeCode: AgentAdapter = {
  name: 'claude-code',
  binary: 'claude',
  pkg: '@anthropic-ai/claude-code@2.1.332',
  credentials: ['ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN'],
  passthrough: ['ANTHROPIC_BASE_URL', 'ANTHROPIC_MODEL'],
  modelUrlVariable: 'ANTHROPIC_BASE_URL',
  defaultModelUrl: 'https://api.anthropic.com',
  modelApi: 'anthropic',
  modelAuth(env): ReturnType<AgentAdapter['modelAuth']> {
    // Claude Code prefers an API key to an OAuth token when it has both; so does the gateway.
    if (env.ANTHROPIC_API_KEY)
      return {
        auth: { header: 'x-api-key', value: env.ANTHROPIC_API_KEY },
        placeholders: { ANTHROPIC_API_KEY: KEY_PLACEHOLDER },
      };
    if (env.CLAUDE_CODE_OAUTH_TOKEN)
      return {
        auth: { header: 'authorization', value: `Bearer ${env.CLAUDE_CODE_OAUTH_TOKEN}` },
        placeholders: { CLAUDE_CODE_OAUTH_TOKEN: KEY_PLACEHOLDER },
      };
    return null;
  },
  invocation(prompt, limits) {
    const args = [
      '-p',
      prompt,
      '--output-format',
      'stream-json',
      '--verbose',
      '--permission-mode',
      'acceptEdits',
      '--allowedTools',
      CLAUDE_TOOLS,
      '--no-session-persistence',
    ];
    if (limits.maxUsd !== null) args.push('--max-budget-usd', String(limits.maxUsd));
    // No telemetry or update checks from a CI job.
    return { args, env: { DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' } };
  },
  parseLine(line) {
    const j = jsonLine(line);
    if (!j) return null;
    const a = Assistant.safeParse(j);
    if (a.success) {
      const text = a.data.message.content
        .filter((c) => c.type === 'text' && c.text)
        .map((c) => c.text)
        .join('\n')
        .trim();
      return {
        turn: true,
        ...(a.data.message.id ? { turnId: a.data.message.id } : {}),
        ...(text ? { message: text } : {}),
      };
    }
    return null;
  },
  outcome(stdout, exit): AgentOutcome {
    const lines = stdout.split('\n');
    let result: z.infer<typeof Result> | null = null;
    // TR37: a tool that reaches the CLI's output can print a result line of its own: the highest cost
    // any result line states is the one recorded, so a forged one can never lower it (the run's limit caps it).
    let highest: number | undefined;
    let last = '';
    for (const line of lines) {
      const j = jsonLine(line);
      if (!j) continue;
      const r = Result.safeParse(j);
      if (r.success) {
        result = r.data;
        if (r.data.total_cost_usd !== undefined) highest = Math.max(highest ?? 0, r.data.total_cost_usd);
      }
      const ev = this.parseLine(line);
      if (ev?.message) last = ev.message;
    }
    if (!result) {
      const how = exit.signal ? `was stopped (${exit.signal})` : `exited with code ${exit.code}`;
      return {
        ok: false,
        reason: 'no_result',
        message: last || `Claude Code ${how} before printing its result.`,
        cost: null,
      };
    }
    const u = result.usage;
    const models = Object.values(result.modelUsage ?? {});
    const sum = (f: (m: (typeof models)[number]) => number) => models.reduce((t, m) => t + f(m), 0);
    const cost = {
      usd: highest ?? null,
      inputTokens: models.length
        ? sum((m) => m.inputTokens + m.cacheReadInputTokens + m.cacheCreationInputTokens)
        : u
          ? u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens
          : 0,
      outputTokens: models.length ? sum((m) => m.outputTokens) : (u?.output_tokens ?? 0),
      note: highest === undefined ? 'Claude Code printed no total_cost_usd' : null,
    };
    const message = (result.result ?? '').trim() || (result.errors ?? []).join('; ') || last;
    const failed = result.is_error || result.subtype !== 'success' || exit.code !== 0;
    const reason = failed
      ? [result.subtype !== 'success' ? result.subtype : 'is_error', ...(result.errors ?? [])].join(': ')
      : null;
    return { ok: !failed, reason, message, cost };
  },
};
