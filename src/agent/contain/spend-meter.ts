import type { MeteredAnswer } from './model-answers.js';
import { priceOf, priceTokens, type PriceTable } from './prices.js';

// TR42: the gateway's meter. Spend nobody priced is refused, not free:
// a request names its model, and a model the price table cannot price is not
// passed on; an answer the meter cannot read, or that names a model it cannot
// price, ends the run. And a request is admitted only while what the run has
// spent plus the most each request in flight could bring stays under its
// limit, so requests sent in parallel overshoot the limit by at most the one
// answer admitted last (they wait their turn instead of all passing at once).

/** The price table in force, or why there is none (a bad YOKE_MODEL_PRICES). */
export type Prices = { ok: true; table: PriceTable } | { ok: false; error: string };

/**
 * The most output tokens a request may ask for when it names no limit of its own: the largest any priced model
 * answers with. Its worst case is priced at that, so a request with no limit waits for every other in flight.
 */
export const UNBOUNDED_OUTPUT_TOKENS = 128_000;

/** What a request could cost at most: every byte of its body an input token at the dearest input price, and its output limit. */
export function worstCase(
  table: PriceTable,
  model: string,
  bodyBytes: number,
  maxOutput: number | null,
): number | null {
  const p = priceOf(table, model);
  if (!p) return null;
  const input = Math.max(p.input, p.cache_write ?? 0, p.cached_input ?? 0);
  return (bodyBytes * input + (maxOutput ?? UNBOUNDED_OUTPUT_TOKENS) * p.output) / 1_000_000;
}

export type Admission = { ok: true; ticket: number } | { ok: false; why: string };

/** Why no price is known for a model, naming the setting that adds one. */
export const unpricedModel = (model: string): string =>
  `yoke cannot price the model ${model}: no price is known for it, so its spend would count as nothing. Add its price to YOKE_MODEL_PRICES (dollars per million tokens) or choose a priced model`;

export class SpendMeter {
  /** What the counted answers cost. */
  spent = 0;
  /** Why the run must end (spend the meter could not count), once said. */
  stopped: string | null = null;
  private readonly held = new Map<number, number>();
  private next = 1;
  private waiting: (() => void)[] = [];

  constructor(
    private readonly opts: {
      prices: Prices;
      maxUsd: number | null;
      /** Told once when the run must end: an unpriced model, or an answer whose spend cannot be read. */
      onStop?: (why: string) => void;
      /** Told after each counted answer, with what the run has spent. */
      onSpent?: (spent: number) => void;
    },
  ) {}

  private stop(why: string): void {
    if (this.stopped) return;
    this.stopped = why;
    this.opts.onStop?.(why);
    this.wake();
  }

  private wake(): void {
    const w = this.waiting;
    this.waiting = [];
    for (const f of w) f();
  }

  private limitReached(): string | null {
    const max = this.opts.maxUsd;
    return max !== null && this.spent >= max
      ? `yoke: this run's spend limit of $${max} is reached ($${this.spent.toFixed(4)} spent)`
      : null;
  }

  /**
   * Whether a request for `model` of `bodyBytes` asking for at most `maxOutput` tokens may go on now: it waits
   * while the run's spend plus the requests in flight could reach the limit, and is refused once the spend has.
   */
  async admit(model: string | null, bodyBytes: number, maxOutput: number | null): Promise<Admission> {
    const { prices, maxUsd } = this.opts;
    for (;;) {
      if (this.stopped) return { ok: false, why: this.stopped };
      if (!prices.ok) {
        this.stop(`yoke cannot price this run's model: ${prices.error}`);
        continue;
      }
      if (!model)
        return { ok: false, why: 'yoke: a request to the model must name its model, so its spend can be priced' };
      const worst = worstCase(prices.table, model, bodyBytes, maxOutput);
      if (worst === null) {
        this.stop(unpricedModel(model));
        continue;
      }
      const reached = this.limitReached();
      if (reached) return { ok: false, why: reached };
      const inFlight = [...this.held.values()].reduce((a, b) => a + b, 0);
      if (maxUsd === null || this.held.size === 0 || this.spent + inFlight < maxUsd) {
        const ticket = this.next++;
        this.held.set(ticket, worst);
        return { ok: true, ticket };
      }
      await new Promise<void>((r) => this.waiting.push(r));
    }
  }

  /**
   * A request's end: `answer` is what its answer billed, null for one that billed nothing (an error status),
   * or 'unreadable' for a successful answer the meter could not read.
   */
  settle(ticket: number, endpoint: string, answer: MeteredAnswer | null | 'unreadable'): void {
    this.held.delete(ticket);
    if (answer === 'unreadable') {
      this.stop(
        `yoke could not read what the model's answer to ${endpoint} billed, so its spend cannot be counted: the run is stopped`,
      );
    } else if (answer) {
      const usd =
        this.opts.prices.ok && answer.model ? priceTokens(this.opts.prices.table, answer.model, answer.usage) : null;
      if (usd === null) this.stop(unpricedModel(answer.model ?? 'that the answer did not name'));
      else {
        this.spent += usd;
        this.opts.onSpent?.(this.spent);
      }
    }
    this.wake();
  }
}
