// SC03: yoke plans its GitHub requests against GitHub's secondary limits
// rather than waiting to be refused: per installation, a sliding minute of
// points (a GET costs 1, any other request 5) and of content-creating writes,
// each kept under the limit by a headroom. The limits are data passed in.

export interface BudgetPolicy {
  pointsPerMinute: number;
  contentWritesPerMinute: number;
  /** The share of each limit yoke lets itself use (0.8: a fifth is left for everything else on the account). */
  headroom: number;
}

/** GitHub's documented secondary limits for REST. */
export const GITHUB_SECONDARY_LIMITS: BudgetPolicy = {
  pointsPerMinute: 900,
  contentWritesPerMinute: 80,
  headroom: 0.8,
};

export interface RequestCost {
  points: number;
  contentWrite: boolean;
}

/** What one request costs: a GET 1 point, any other 5; creating a comment, issue, PR, review or reaction is a content write. */
export function costOf(method: string, url: string): RequestCost {
  const m = method.toUpperCase();
  if (m === 'GET' || m === 'HEAD') return { points: 1, contentWrite: false };
  const path = url.replace(/^https?:\/\/[^/]+/, '').replace(/\?.*$/, '');
  const creates = m === 'POST' && /\/(issues|comments|pulls|reviews|reactions)$/.test(path);
  return { points: 5, contentWrite: creates };
}

const WINDOW_MS = 60_000;

export class RequestBudget {
  private spent: { at: number; cost: RequestCost }[] = [];

  constructor(
    private readonly policy: BudgetPolicy,
    private readonly now: () => number,
  ) {}

  private prune(): void {
    const from = this.now() - WINDOW_MS;
    while (this.spent.length && this.spent[0]!.at <= from) this.spent.shift();
  }

  /** What is left of this minute's budget. */
  remaining(): { points: number; contentWrites: number } {
    this.prune();
    const points = this.spent.reduce((n, s) => n + s.cost.points, 0);
    const writes = this.spent.filter((s) => s.cost.contentWrite).length;
    return {
      points: Math.floor(this.policy.pointsPerMinute * this.policy.headroom) - points,
      contentWrites: Math.floor(this.policy.contentWritesPerMinute * this.policy.headroom) - writes,
    };
  }

  /** How long to hold a request of this cost so that it fits the budget (0: send it now). */
  waitFor(cost: RequestCost): number {
    const left = this.remaining();
    if (left.points >= cost.points && (!cost.contentWrite || left.contentWrites >= 1)) return 0;
    // The earliest moment enough of the window has slid past.
    let points = left.points;
    let writes = left.contentWrites;
    for (const s of this.spent) {
      points += s.cost.points;
      if (s.cost.contentWrite) writes++;
      if (points >= cost.points && (!cost.contentWrite || writes >= 1)) return s.at + WINDOW_MS - this.now() + 1;
    }
    return WINDOW_MS;
  }

  spend(cost: RequestCost): void {
    this.spent.push({ at: this.now(), cost });
  }
}

/** One budget per installation (and one for the app's own requests). */
export class BudgetBook {
  private budgets = new Map<string, RequestBudget>();

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
}
