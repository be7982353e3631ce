import { routeOf } from './routes.js';

// SC03: yoke plans its GitHub requests against GitHub's limits rather than waiting to be refused, per
// installation, counted as GitHub counts them
// (https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api):
// - secondary, points: each REST endpoint (a method and a route template) takes at most 900 points a minute
//   from one installation's token; a GET, HEAD or OPTIONS costs 1 point, any other request 5. A 304 is a
//   GET like any other: it costs its point.
// - secondary, content: at most 80 content-creating requests a minute and 500 an hour.
// - primary: the installation's own hourly limit, as its last answer's `x-ratelimit-*` headers say. A 304
//   to a conditional request does not count against it, so a 304 never lowers what yoke reckons is left.
// Each is kept under its limit by a headroom. The limits are data passed in.

export interface BudgetPolicy {
  /** Points a minute one installation may spend on one REST endpoint. */
  pointsPerMinutePerEndpoint: number;
  contentWritesPerMinute: number;
  contentWritesPerHour: number;
  /** The share of each limit yoke lets itself use (0.8: a fifth is left for bursts yoke cannot plan, as a retry). */
  headroom: number;
}

/** GitHub's documented limits for REST (secondary; the primary comes from each answer's headers). */
export const GITHUB_SECONDARY_LIMITS: BudgetPolicy = {
  pointsPerMinutePerEndpoint: 900,
  contentWritesPerMinute: 80,
  contentWritesPerHour: 500,
  headroom: 0.8,
};

export interface RequestCost {
  /** `METHOD /route/{template}`: what GitHub's per-endpoint limit counts. */
  endpoint: string;
  points: number;
  contentWrite: boolean;
}

/** What one request costs: a GET 1 point, any other 5; creating a comment, issue, PR, review or reaction is a content write. */
export function costOf(method: string, url: string): RequestCost {
  const m = method.toUpperCase();
  const route = routeOf(url);
  const endpoint = `${m} ${route}`;
  if (m === 'GET' || m === 'HEAD' || m === 'OPTIONS') return { endpoint, points: 1, contentWrite: false };
  const creates = m === 'POST' && /\/(issues|comments|pulls|reviews|reactions)$/.test(route);
  return { endpoint, points: 5, contentWrite: creates };
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/** A sliding window of amounts spent: what is left of a limit, and when enough will have slid out. */
class Window {
  private spent: { at: number; amount: number }[] = [];
  private total = 0;

  constructor(
    private readonly lengthMs: number,
    readonly limit: number,
  ) {}

  private prune(now: number): void {
    const from = now - this.lengthMs;
    while (this.spent.length && this.spent[0]!.at <= from) this.total -= this.spent.shift()!.amount;
  }

  left(now: number): number {
    this.prune(now);
    return this.limit - this.total;
  }

  /** How long until `amount` fits (0: now); more than the whole limit waits until the window is empty, not forever. */
  waitFor(wanted: number, now: number): number {
    const amount = Math.min(wanted, Math.max(0, this.limit));
    let left = this.left(now);
    if (left >= amount) return 0;
    for (const s of this.spent) {
      left += s.amount;
      if (left >= amount) return s.at + this.lengthMs - now + 1;
    }
    return this.lengthMs;
  }

  spend(amount: number, now: number): void {
    this.spent.push({ at: now, amount });
    this.total += amount;
  }
}

/** The primary limit as the installation's last answer told it. */
interface Primary {
  limit: number;
  remaining: number;
  resetAt: number;
}

/** What is left of an installation's budgets now. */
export interface BudgetLeft {
  /** Points on the installation's busiest endpoint this minute, or of the primary limit if fewer. */
  points: number;
  contentWrites: number;
  /** What the primary limit has left above yoke's headroom (Infinity until an answer says). */
  primary: number;
}

/** What is left without a budget: everything. */
export const NO_BUDGET: BudgetLeft = {
  points: Number.POSITIVE_INFINITY,
  contentWrites: Number.POSITIVE_INFINITY,
  primary: Number.POSITIVE_INFINITY,
};

/** One installation's budgets: a minute of points per endpoint, content writes a minute and an hour, the primary limit. */
export class RequestBudget {
  private readonly endpoints = new Map<string, Window>();
  private readonly writesMinute: Window;
  private readonly writesHour: Window;
  private primary: Primary | null = null;

  constructor(
    private readonly policy: BudgetPolicy,
    private readonly now: () => number,
  ) {
    this.writesMinute = new Window(MINUTE_MS, Math.floor(policy.contentWritesPerMinute * policy.headroom));
    this.writesHour = new Window(HOUR_MS, Math.floor(policy.contentWritesPerHour * policy.headroom));
  }

  private endpoint(name: string): Window {
    let w = this.endpoints.get(name);
    if (!w) {
      w = new Window(MINUTE_MS, Math.floor(this.policy.pointsPerMinutePerEndpoint * this.policy.headroom));
      this.endpoints.set(name, w);
    }
    return w;
  }

  /** The primary limit's requests left above the share yoke leaves alone (Infinity before any answer, or past the reset). */
  private primaryLeft(now: number): number {
    const p = this.primary;
    if (!p || now >= p.resetAt) return Number.POSITIVE_INFINITY;
    return p.remaining - Math.ceil(p.limit * (1 - this.policy.headroom));
  }

  /** What is left: points on the busiest endpoint (or the primary limit's, if fewer), and content writes. */
  remaining(): BudgetLeft {
    const now = this.now();
    const primary = this.primaryLeft(now);
    let points = Math.floor(this.policy.pointsPerMinutePerEndpoint * this.policy.headroom);
    for (const w of this.endpoints.values()) points = Math.min(points, w.left(now));
    return {
      points: Math.min(points, primary),
      contentWrites: Math.min(this.writesMinute.left(now), this.writesHour.left(now)),
      primary,
    };
  }

  /** What is left this minute on one endpoint. */
  endpointLeft(endpoint: string): number {
    return this.endpoint(endpoint).left(this.now());
  }

  /** How long to hold a request of this cost so that it fits every budget (0: send it now). */
  waitFor(cost: RequestCost): number {
    const now = this.now();
    const waits = [this.endpoint(cost.endpoint).waitFor(cost.points, now)];
    if (cost.contentWrite) waits.push(this.writesMinute.waitFor(1, now), this.writesHour.waitFor(1, now));
    if (this.primaryLeft(now) < 1) waits.push(this.primary!.resetAt - now + 1);
    return Math.max(...waits);
  }

  /** A request was sent: its points and content write are spent, whatever the answer. */
  spend(cost: RequestCost): void {
    const now = this.now();
    this.endpoint(cost.endpoint).spend(cost.points, now);
    if (cost.contentWrite) {
      this.writesMinute.spend(1, now);
      this.writesHour.spend(1, now);
    }
  }

  /**
   * An answer came: the primary limit is what its headers say. A 304 counts nothing against it, and says so
   * itself (GitHub's `remaining` on a 304 is unchanged); without headers, a counted answer takes one off.
   */
  answered(status: number, headers: Record<string, unknown>): void {
    const limit = Number(headers['x-ratelimit-limit']);
    const remaining = Number(headers['x-ratelimit-remaining']);
    const reset = Number(headers['x-ratelimit-reset']);
    const resource = headers['x-ratelimit-resource'];
    if (resource !== undefined && resource !== 'core') return;
    if (Number.isFinite(limit) && Number.isFinite(remaining) && Number.isFinite(reset) && limit > 0) {
      this.primary = { limit, remaining, resetAt: reset * 1000 };
    } else if (this.primary && status !== 304) {
      this.primary.remaining--;
    }
  }
}

/** Said to a request that was held for its budget when yoke stopped: it was never sent. */
export class BudgetStopped extends Error {
  constructor() {
    super('yoke is stopping: a request held for its request budget was not sent');
    this.name = 'BudgetStopped';
  }
}

/** One budget per installation (and one for the app's own requests). */
export class BudgetBook {
  private budgets = new Map<string, RequestBudget>();
  private stopped = false;
  private readonly held = new Set<() => void>();

  constructor(
    private readonly policy: BudgetPolicy,
    private readonly now: () => number,
  ) {}

  for(scope: string): RequestBudget {
    let b = this.budgets.get(scope);
    if (!b) {
      b = new RequestBudget(this.policy, this.now);
      this.budgets.set(scope, b);
    }
    return b;
  }

  /** Holds a request `ms` (by `sleep`), or until stop(), which refuses it with BudgetStopped. */
  async hold(ms: number, sleep: (ms: number) => Promise<void>): Promise<void> {
    if (this.stopped) throw new BudgetStopped();
    let wake!: () => void;
    const stopping = new Promise<void>((r) => (wake = r));
    this.held.add(wake);
    try {
      await Promise.race([sleep(ms), stopping]);
    } finally {
      this.held.delete(wake);
    }
    if (this.stopped) throw new BudgetStopped();
  }

  /** yoke is stopping: every request held for its budget is refused now, and every later one at once. */
  stop(): void {
    this.stopped = true;
    for (const wake of this.held) wake();
  }

  /** The installations with a budget so far (for the metrics). */
  scopes(): string[] {
    return [...this.budgets.keys()];
  }
}
