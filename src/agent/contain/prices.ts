import { z } from 'zod';
import { issuesText } from '../../kernel/issues-text.js';

// What a model's tokens cost: the runner prices what its model gateway
// counted (TR39), and Codex's own token lines when it runs uncontained.
// Prices are US dollars per million tokens; the operator replaces the table
// with YOKE_MODEL_PRICES (JSON of the same shape) when they change. A model
// is found by its name, or by the longest name in the table its dated name
// starts with (`claude-sonnet-4-5-20250929` is `claude-sonnet-4-5`).

export const ModelPrice = z
  .object({
    input: z.number().min(0),
    /** Tokens read from the prompt cache (default: the input price). */
    cached_input: z.number().min(0).optional(),
    /** Tokens written to the prompt cache (Anthropic's; default: the input price). */
    cache_write: z.number().min(0).optional(),
    output: z.number().min(0),
  })
  .strict();
export const PriceTable = z.record(z.string(), ModelPrice);
export type PriceTable = z.infer<typeof PriceTable>;

export const DEFAULT_PRICES: PriceTable = {
  'gpt-5.5': { input: 1.25, cached_input: 0.125, output: 10 },
  'gpt-5.4': { input: 1.25, cached_input: 0.125, output: 10 },
  'gpt-5.3-codex': { input: 1.25, cached_input: 0.125, output: 10 },
  // Anthropic's, as Claude Code 2.1.332 prices them: a cache read is a tenth of the input price, a write 1.25 times it.
  'claude-opus-5-5': { input: 4, cached_input: 0.4, cache_write: 5, output: 20 },
  'claude-opus-5': { input: 5, cached_input: 0.5, cache_write: 6.25, output: 25 },
  'claude-sonnet-5-5': { input: 2, cached_input: 0.2, cache_write: 2.5, output: 10 },
  'claude-sonnet-5': { input: 2, cached_input: 0.2, cache_write: 2.5, output: 10 },
  'claude-opus-4-5': { input: 5, cached_input: 0.5, cache_write: 6.25, output: 25 },
  'claude-sonnet-4-5': { input: 3, cached_input: 0.3, cache_write: 3.75, output: 15 },
  'claude-haiku-4-5': { input: 1, cached_input: 0.1, cache_write: 1.25, output: 5 },
};

/** The price table in force: the operator's, when given and valid, else the default; a bad one is an error naming the variable. */
export function priceTable(raw: string | undefined): { ok: true; table: PriceTable } | { ok: false; error: string } {
  if (!raw) return { ok: true, table: DEFAULT_PRICES };
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return {
      ok: false,
      error:
        'YOKE_MODEL_PRICES is not JSON; give {"<model>": {"input": 1.25, "output": 10}} in dollars per million tokens',
    };
  }
  const parsed = PriceTable.safeParse(json);
  if (!parsed.success)
    return {
      ok: false,
      error: `YOKE_MODEL_PRICES: ${issuesText(parsed.error, 'table')}`,
    };
  return { ok: true, table: parsed.data };
}

export interface TokenCount {
  /** Every input token, the cached and cache-written ones included. */
  input: number;
  cachedInput: number;
  cacheWrite?: number;
  output: number;
}

/** A model's price: by its name, or by the longest name in the table its own (dated) name starts with. */
export function priceOf(table: PriceTable, model: string): z.infer<typeof ModelPrice> | null {
  if (table[model]) return table[model];
  const by = Object.keys(table)
    .filter((k) => model.startsWith(`${k}-`))
    .sort((a, b) => b.length - a.length)[0];
  return by ? table[by]! : null;
}

/** The dollar cost of the tokens, or null for a model the table does not price. */
export function priceTokens(table: PriceTable, model: string, t: TokenCount): number | null {
  const p = priceOf(table, model);
  if (!p) return null;
  const write = t.cacheWrite ?? 0;
  const fresh = Math.max(0, t.input - t.cachedInput - write);
  const usd =
    (fresh * p.input +
      t.cachedInput * (p.cached_input ?? p.input) +
      write * (p.cache_write ?? p.input) +
      t.output * p.output) /
    1_000_000;
  return Math.round(usd * 1_000_000) / 1_000_000;
}
