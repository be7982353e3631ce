import { z } from 'zod';
import { issuesText } from '../kernel/issues-text.js';

// What a model's tokens cost, for agents that print tokens but no price
// (Codex). Prices are US dollars per million tokens; the operator replaces
// the table with YOKE_MODEL_PRICES (JSON of the same shape) when they change.

export const ModelPrice = z
  .object({ input: z.number().min(0), cached_input: z.number().min(0).optional(), output: z.number().min(0) })
  .strict();
export const PriceTable = z.record(z.string(), ModelPrice);
export type PriceTable = z.infer<typeof PriceTable>;

export const DEFAULT_PRICES: PriceTable = {
  'gpt-5.5': { input: 1.25, cached_input: 0.125, output: 10 },
  'gpt-5.4': { input: 1.25, cached_input: 0.125, output: 10 },
  'gpt-5.3-codex': { input: 1.25, cached_input: 0.125, output: 10 },
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
  input: number;
  cachedInput: number;
  output: number;
}

/** The dollar cost of the tokens, or null for a model the table does not price. */
export function priceTokens(table: PriceTable, model: string, t: TokenCount): number | null {
  const p = table[model];
  if (!p) return null;
  const fresh = Math.max(0, t.input - t.cachedInput);
  const usd = (fresh * p.input + t.cachedInput * (p.cached_input ?? p.input) + t.output * p.output) / 1_000_000;
  return Math.round(usd * 1_000_000) / 1_000_000;
}
