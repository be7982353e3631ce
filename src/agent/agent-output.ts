import type { AgentCost } from './clis/adapter.js';
import type { MeteredAnswer } from './contain/model-answers.js';
import { priceTokens, type PriceTable } from './contain/prices.js';

// What yoke makes of what an agent wrote or printed before it keeps it: the title in the agent's
// commit (TR23), and the cost the agent's output states (TR37), which gives way to what the model gateway
// counted (TR39).

/**
 * The title as a commit's subject: anyone who can edit the issue wrote it, and a closing keyword and
 * a reference in a commit message (`Fixes #12`) close that issue when the commit lands. The reference is
 * broken (`Fixes # 12`), the words kept.
 */
export const inertTitle = (title: string): string =>
  title.replace(/\b(close[sd]?|fix(?:e[sd])?|resolve[sd]?)(\s*:?\s+)((?:[\w.-]+\/[\w.-]+)?#)(\d+)/gi, '$1$2$3 $4');

/**
 * TR37: what the run cost, as recorded: never past the run's limit. The agent CLI's own limit stops it
 * there; a higher figure is something a tool printed where the CLI's output goes, and counts at the limit.
 */
export function cappedCost<C extends { usd: number | null; note: string | null }>(c: C, maxUsd: number | null): C {
  if (c.usd === null || maxUsd === null || c.usd <= maxUsd) return c;
  return {
    ...c,
    usd: maxUsd,
    note: `the agent's output stated $${c.usd}, past the run's limit of $${maxUsd}: recorded at the limit`,
  };
}

/** TR39: what one counted answer cost, or null when the table (or a bad YOKE_MODEL_PRICES) cannot price its model. */
export const priceAnswer = (
  prices: { ok: true; table: PriceTable } | { ok: false; error: string },
  a: MeteredAnswer,
): number | null => (prices.ok && a.model ? priceTokens(prices.table, a.model, a.usage) : null);

/**
 * TR39: what the run cost, from the answers the model gateway counted (a channel no tool in the sandbox
 * writes), priced by yoke's table: the truth, which passes the run's limit by at most the answer that crossed
 * it (the gateway passes nothing on after). Only a model the table cannot price falls back to the agent's own
 * figure, capped at the limit (TR37), and says so. No answer counted: nothing was billed to the key, and the run
 * reports that it spent nothing (BU02), so its reservation goes back at once.
 */
export function meteredCost(
  answers: readonly MeteredAnswer[],
  stated: AgentCost | null,
  prices: { ok: true; table: PriceTable } | { ok: false; error: string },
  maxUsd: number | null,
): AgentCost {
  if (!answers.length) return { usd: 0, inputTokens: 0, outputTokens: 0, note: null };
  let usd = 0;
  const unpriced = new Set<string>();
  for (const a of answers) {
    const p = priceAnswer(prices, a);
    if (p === null) unpriced.add(a.model ?? 'an unnamed model');
    else usd += p;
  }
  const tokens = {
    inputTokens: answers.reduce((t, a) => t + a.usage.input, 0),
    outputTokens: answers.reduce((t, a) => t + a.usage.output, 0),
  };
  if (!unpriced.size) return { usd: Math.round(usd * 1_000_000) / 1_000_000, ...tokens, note: null };
  const why = !prices.ok
    ? prices.error
    : `no price is known for ${[...unpriced].join(', ')} (set YOKE_MODEL_PRICES to price it)`;
  return cappedCost(
    {
      usd: stated?.usd ?? null,
      ...tokens,
      note: `${why}: ${stated?.usd != null ? "the dollar figure is the agent's own" : 'tokens only'}`,
    },
    maxUsd,
  );
}
