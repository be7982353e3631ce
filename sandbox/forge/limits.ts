import { HttpError } from '../http-error.js';

// GitHub's rate limits as the embedded forge enforces them, per installation token's installation
// (https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api):
// - primary: an hourly budget, 5,000 requests plus 50 for each repository past 20, at most 12,500 (an
//   installation); 5,000 for anyone else. A 304 to a conditional request does not count against it.
// - secondary: 900 points a minute on each REST endpoint (a GET 1, anything else 5; a 304 too), 80
//   content-creating requests a minute, 100 requests at once.
// A refusal is GitHub's: 403 with its message, `retry-after` for a secondary limit, `x-ratelimit-remaining: 0`
// and the reset for the primary one.

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/** Who a request counts against: an installation, or the credential itself (a person, the app). */
export type Counted = { installationId: number } | { credential: string };

const keyOf = (c: Counted) => ('installationId' in c ? `i${c.installationId}` : `c${c.credential}`);

export class GitHubLimits {
  private readonly points = new Map<string, { at: number; points: number }[]>();
  private readonly writes = new Map<string, number[]>();
  private readonly primary = new Map<string, { used: number; resetAt: number }>();
  private readonly inFlight = new Map<string, number>();
  /** Requests refused for a limit, by kind: the bench asserts yoke planned well enough for none. */
  readonly refused = { secondary: 0, primary: 0, concurrent: 0 };

  constructor(
    private readonly now: () => number,
    /** How many repositories an installation holds (its primary limit grows with them). */
    private readonly repositories: (installationId: number) => number,
  ) {}

  private limitOf(c: Counted): number {
    if (!('installationId' in c)) return 5_000;
    return Math.min(12_500, 5_000 + 50 * Math.max(0, this.repositories(c.installationId) - 20));
  }

  private window(c: Counted): { used: number; resetAt: number } {
    const key = keyOf(c);
    let w = this.primary.get(key);
    if (!w || this.now() >= w.resetAt) this.primary.set(key, (w = { used: 0, resetAt: this.now() + HOUR_MS }));
    return w;
  }

  /** The `x-ratelimit-*` headers of an answer, after `counted` more requests. */
  headers(c: Counted): Record<string, string> {
    const w = this.window(c);
    const limit = this.limitOf(c);
    return {
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': String(Math.max(0, limit - w.used)),
      'x-ratelimit-used': String(w.used),
      'x-ratelimit-reset': String(Math.ceil(w.resetAt / 1000)),
      'x-ratelimit-resource': 'core',
    };
  }

  /**
   * A request arrives: refused if it would pass a limit, else its secondary cost is spent (whatever the
   * answer will be) and it is in flight until done() is called.
   */
  admit(c: Counted, method: string, route: string): { done: () => void } {
    const key = keyOf(c);
    const now = this.now();
    const w = this.window(c);
    if (w.used >= this.limitOf(c)) {
      this.refused.primary++;
      throw new HttpError(
        403,
        'installationId' in c
          ? `API rate limit exceeded for installation ID ${c.installationId}.`
          : 'API rate limit exceeded for user.',
        { ...this.headers(c), 'x-ratelimit-remaining': '0' },
      );
    }
    const running = this.inFlight.get(key) ?? 0;
    const endpoint = `${key} ${method} ${route}`;
    const spent = (this.points.get(endpoint) ?? []).filter((p) => p.at > now - MINUTE_MS);
    const cost = method === 'GET' || method === 'HEAD' || method === 'OPTIONS' ? 1 : 5;
    const creates = method === 'POST' && /\/(issues|comments|pulls|reviews|reactions)$/.test(route);
    const written = (this.writes.get(key) ?? []).filter((at) => at > now - MINUTE_MS);
    const secondary = (why: string, retryAfterS: number, kind: 'secondary' | 'concurrent') => {
      this.refused[kind]++;
      return new HttpError(
        403,
        `You have exceeded a secondary rate limit (${why}). Please wait a few minutes before you try again.`,
        {
          'retry-after': String(retryAfterS),
        },
      );
    };
    if (running >= 100) throw secondary('100 concurrent requests', 1, 'concurrent');
    if (spent.reduce((n, p) => n + p.points, 0) + cost > 900)
      throw secondary(
        `900 points a minute on ${method} ${route}`,
        Math.ceil((spent[0]!.at + MINUTE_MS - now) / 1000),
        'secondary',
      );
    if (creates && written.length >= 80)
      throw secondary(
        '80 content-creating requests a minute',
        Math.ceil((written[0]! + MINUTE_MS - now) / 1000),
        'secondary',
      );
    this.points.set(endpoint, [...spent, { at: now, points: cost }]);
    if (creates) this.writes.set(key, [...written, now]);
    this.inFlight.set(key, running + 1);
    return { done: () => this.inFlight.set(key, (this.inFlight.get(key) ?? 1) - 1) };
  }

  /** An answer that counts against the primary limit (any but a 304) was sent. */
  count(c: Counted): void {
    this.window(c).used++;
  }
}
