import { ProbotOctokit } from 'probot';
import type { Clock } from '../../kernel/clock.js';
import type { Store } from '../../store/store.js';
import { createLimiter, type Limiter } from '../../kernel/limit.js';
import { costOf, type BudgetBook } from './budget.js';
import { conditionalCache, hooked, scopeOf, type CacheStats } from './conditional-cache.js';
import { routeOf } from './routes.js';
import { fieldOf, recordOf } from '../../kernel/guards.js';
import { inSpan, NO_TRACER, SpanKind, type Tracer } from '../../kernel/trace.js';

// The Octokit class yoke's Probot runs on, and the client policy behind it.

export type Octokit = InstanceType<typeof ProbotOctokit>;

export interface GitHubClientPolicy {
  /** SC01: GitHub requests in flight at once for one installation (GitHub allows 100 a token). */
  maxInFlight: number;
  throttle: { enabled: boolean; maxRetries: number; maxWaitSeconds: number };
  /** Statuses that are answers, not faults: retrying them only delays the answer (a 409 merge refusal, say). */
  retry: { enabled: boolean; doNotRetry: number[] };
}

export const DEFAULT_CLIENT_POLICY: GitHubClientPolicy = {
  maxInFlight: 20,
  throttle: { enabled: true, maxRetries: 3, maxWaitSeconds: 15 * 60 },
  retry: { enabled: true, doNotRetry: [400, 401, 403, 404, 405, 409, 410, 422, 451] },
};

/** The default policy, with request throttling on or off (an operator setting). */
export const clientPolicy = (
  throttle: boolean,
  maxInFlight = DEFAULT_CLIENT_POLICY.maxInFlight,
): GitHubClientPolicy => ({
  ...DEFAULT_CLIENT_POLICY,
  maxInFlight,
  throttle: { ...DEFAULT_CLIENT_POLICY.throttle, enabled: throttle },
});

/**
 * SC03: an Octokit plugin that holds a request until the installation's
 * budgets have room for it (planned, before GitHub would refuse), then spends it, and reads the primary limit
 * off its answer. A hold ends early, refused, when yoke stops (BudgetBook.stop).
 */
export function budgeted(book: BudgetBook, sleep: (ms: number) => Promise<void>) {
  return (octokit: unknown, options: { auth?: { installationId?: number | string } }) => {
    const o = hooked(octokit);
    const scope = scopeOf(options);
    o.hook.wrap('request', async (request, opts) => {
      // GitHub counts an endpoint by its route: the template a request names, not its URL.
      const cost = costOf(String(opts.method ?? 'GET'), String(opts.url ?? ''));
      const budget = book.for(scope);
      // Others held with it may wake first and take the room: each wakes to plan again.
      for (let wait = budget.waitFor(cost); wait > 0; wait = budget.waitFor(cost)) await book.hold(wait, sleep);
      budget.spend(cost);
      try {
        const res = await request(opts);
        budget.answered(Number(fieldOf(res, 'status')), recordOf(fieldOf(res, 'headers')) ?? {});
        return res;
      } catch (err) {
        const res = fieldOf(err, 'response');
        if (res) budget.answered(Number(fieldOf(res, 'status')), recordOf(fieldOf(res, 'headers')) ?? {});
        throw err;
      }
    });
    return {};
  };
}

/**
 * How long this process goes by the store's word on a hold before it asks the store again: a hold another process
 * records (after its own refusal) stops this one's requests within this time. Every request asked the store twice
 * before, two statements of four per request at a cold read; a hold this process records stops it at once.
 */
export const STORE_HOLD_FRESH_MS = 1_000;

/**
 * Until when GitHub told an installation to send nothing, from this process's own answers and the store's
 * (every process's): a secondary limit's retry-after, or a spent primary limit's reset. GitHub's rule is no
 * request at all until then, not only no retry of the one it refused.
 */
export class RateHolds {
  private readonly local = new Map<string, number>();
  /** The store's last answer per scope and when it was asked; requests that start together share one read. */
  private readonly stored = new Map<string, { at: number; until: Promise<number> }>();
  constructor(
    private readonly store: Pick<Store['rateHolds'], 'hold' | 'until'> | null,
    readonly now: () => number,
    private readonly sleep: (ms: number) => Promise<void>,
  ) {}

  private storeUntil(scope: string): Promise<number> {
    if (!this.store) return Promise.resolve(0);
    const now = this.now();
    const known = this.stored.get(scope);
    if (known && now - known.at < STORE_HOLD_FRESH_MS && now >= known.at) return known.until;
    const until = this.store.until(scope);
    this.stored.set(scope, { at: now, until });
    // A read that failed is not kept: the next request asks again.
    until.catch(() => {
      if (this.stored.get(scope)?.until === until) this.stored.delete(scope);
    });
    return until;
  }

  /** Returns once the scope is not held. */
  async wait(scope: string): Promise<void> {
    // Each hold is waited out once; only a later one (another refusal meanwhile) is waited for again.
    let served = 0;
    for (;;) {
      const until = Math.max(this.local.get(scope) ?? 0, await this.storeUntil(scope));
      const left = until - this.now();
      if (until <= served || left <= 0) return;
      await this.sleep(left);
      served = until;
    }
  }

  async hold(scope: string, until: number): Promise<void> {
    if ((this.local.get(scope) ?? 0) < until) this.local.set(scope, until);
    await this.store?.hold(scope, until);
  }
}

/** When a response says to send nothing until later, or null. */
export function holdUntil(status: number, headers: Headers, now: number): number | null {
  if (status !== 403 && status !== 429) return null;
  const retryAfter = headers.get('retry-after');
  if (retryAfter && /^\d+$/.test(retryAfter)) return now + Number(retryAfter) * 1000;
  const reset = Number(headers.get('x-ratelimit-reset'));
  return headers.get('x-ratelimit-remaining') === '0' && reset > 0 ? reset * 1000 : null;
}

/**
 * An Octokit plugin that holds every request of an installation while GitHub says so. It watches each
 * attempt at the fetch (the throttling plugin's own retries included) and waits before taking an in-flight slot.
 */
export function rateHeld(holds: RateHolds) {
  return (octokit: unknown, options: { auth?: { installationId?: number | string } }) => {
    const o = hooked(octokit);
    const scope = scopeOf(options);
    o.hook.wrap('request', async (request, opts) => {
      await holds.wait(scope);
      const given = recordOf(opts.request);
      const own = given?.fetch;
      const inner: typeof fetch = typeof own === 'function' ? (url, init) => own(url, init) : globalThis.fetch;
      const held: typeof fetch = async (url, init) => {
        await holds.wait(scope);
        const res = await inner(url, init);
        const until = holdUntil(res.status, res.headers, holds.now());
        if (until !== null) await holds.hold(scope, until);
        return res;
      };
      // The hooks share one options object (each is bound to it), so the fetch is set on it, not on a copy.
      opts.request = { ...given, fetch: held };
      return request(opts);
    });
    return {};
  };
}

/** An Octokit plugin that makes each request a client span (its route's template, its method and status). */
export function traced(tracer: Tracer) {
  return (octokit: unknown) => {
    hooked(octokit).hook.wrap('request', (request, options) => {
      const method = String(options.method ?? 'GET');
      const route = routeOf(String(options.url ?? ''));
      return inSpan(
        tracer,
        `${method} ${route}`,
        { kind: SpanKind.CLIENT, attributes: { 'http.request.method': method, 'url.template': route } },
        async (span) => {
          try {
            const res = await request(options);
            span.setAttribute('http.response.status_code', Number(fieldOf(res, 'status')));
            return res;
          } catch (err) {
            const status = fieldOf(err, 'status');
            if (typeof status === 'number') span.setAttribute('http.response.status_code', status);
            throw err;
          }
        },
      );
    });
    return {};
  };
}

/**
 * SC01: an Octokit plugin that holds every request until fewer than the bound are in flight for its
 * installation (GitHub counts concurrent requests per token): one installation's burst never holds another's.
 */
export function inFlightLimit(max: number) {
  const limiters = new Map<string, Limiter>();
  return (octokit: unknown, options: { auth?: { installationId?: number | string } }) => {
    const scope = scopeOf(options);
    let limiter = limiters.get(scope);
    if (!limiter) limiters.set(scope, (limiter = createLimiter(max)));
    const bound = limiter;
    hooked(octokit).hook.wrap('request', (request, opts) => bound.run(() => request(opts)));
    return {};
  };
}

/**
 * Probot's Octokit with every GET made conditional against the store's cache,
 * and rate-limit answers honoured: wait as long as retry-after or the reset
 * says, within the policy's bounds, then retry (Probot's own default gives up
 * on secondary limits).
 */
export function yokeOctokit(
  store: Store,
  clock: Clock,
  stats: CacheStats,
  policy: GitHubClientPolicy = DEFAULT_CLIENT_POLICY,
  /** SC03's budget, the rate holds (the store's by default), and the tracer each request's span is made by. */
  more: { budget?: BudgetBook | null; holds?: RateHolds | null; tracer?: Tracer } = {},
) {
  const { budget = null, holds = null, tracer = NO_TRACER } = more;
  const { maxRetries, maxWaitSeconds } = policy.throttle;
  const honour = (retryAfter: number, options: { request?: { retryCount?: number } }) =>
    (options.request?.retryCount ?? 0) < maxRetries && retryAfter <= maxWaitSeconds;
  // One limiter per installation, shared by every Octokit the app makes for it.
  const plugins = [conditionalCache(store.httpCache, () => clock.now(), stats), inFlightLimit(policy.maxInFlight)];
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
  if (budget) plugins.push(budgeted(budget, sleep));
  // Outermost: a held installation waits before it takes an in-flight slot from the others.
  plugins.push(rateHeld(holds ?? new RateHolds(store.rateHolds, () => clock.now(), sleep)));
  // Outermost of all: each request, retries and waits included, as one client span of whatever span is active.
  plugins.push(traced(tracer));
  return ProbotOctokit.plugin(...plugins).defaults((options: Record<string, any>) => ({
    ...options,
    // Probot hands the app-auth strategy a request function without the
    // GitHub Enterprise Server base URL, so installation tokens would be
    // asked of api.github.com; point it where every other request goes.
    auth:
      options.baseUrl && typeof options.auth?.request?.defaults === 'function'
        ? { ...options.auth, request: options.auth.request.defaults({ baseUrl: options.baseUrl }) }
        : options.auth,
    retry: { ...options.retry, enabled: policy.retry.enabled, doNotRetry: policy.retry.doNotRetry },
    // The throttling plugin's own limits (ten requests at once, a write a second) are per installation, as
    // GitHub's are: by default one key holds every installation's requests together.
    throttle: policy.throttle.enabled
      ? {
          ...options.throttle,
          enabled: true,
          id: scopeOf(options),
          onRateLimit: honour,
          onSecondaryRateLimit: honour,
        }
      : { enabled: false },
  }));
}
