import { makeRefusal, type Refusal } from '../../kernel/codes/table.js';
import type { RepoConfig } from '../../config/repo-config.js';
import { isAfkKind, type RunKind } from '../../store/fleet/runs.js';
import type { Holding } from '../../store/fleet/spend.js';
import { sameRepo } from '../../kernel/ids.js';

// BU01-BU04: money is spent down as the cap is, by the one serialized pass, in stage order. A launch reserves
// its run's whole limit against every budget that applies (the repository's and the fleet's, daily and
// monthly, and the share of each that new work may take); a run costs the budgets what it reported, or what it
// reserved until it reports (and when it never does). The store's locked launch checks the same sums under
// the same lock as the cap; these pure functions are what the pass decides with, and what a wait says.

export type BudgetPeriod = 'day' | 'month';

/** One budget a launch must stay within. */
export interface BudgetLine {
  /** Whose money: a repository's, or the whole fleet's (null). */
  repo: string | null;
  period: BudgetPeriod;
  /** The period it counts (UTC): runs launched at or after `since` count, until `until`, when it starts again. */
  since: number;
  until: number;
  limitUsd: number;
  /** The share new work may take: only new work counts against it, and only new work waits for it. */
  newWork: boolean;
  /** The setting that sets it, as a wait names it. */
  setting: string;
}

/** The operator's budgets for the whole fleet (YOKE_DAILY_USD, YOKE_MONTHLY_USD, YOKE_NEW_WORK_SHARE). */
export interface FleetBudgets {
  dailyUsd: number | null;
  monthlyUsd: number | null;
  newWorkShare: number;
}

export const NO_FLEET_BUDGETS: FleetBudgets = { dailyUsd: null, monthlyUsd: null, newWorkShare: 1 };

/** BU02: what a run that calls the model reserves where a budget applies and `agent.max_usd` is not set. */
export const DEFAULT_RUN_USD = 5;

/** The UTC day or month `now` falls in. */
export function periodOf(now: number, period: BudgetPeriod): { since: number; until: number } {
  const d = new Date(now);
  if (period === 'day') {
    const since = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    return { since, until: since + 86_400_000 };
  }
  return {
    since: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1),
    until: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1),
  };
}

/** BU01, BU03: every budget a run of `kind` in `repo` spends from at `now`. */
export function budgetLines(
  repo: string,
  budget: RepoConfig['budget'],
  fleet: FleetBudgets,
  kind: RunKind,
  now: number,
): BudgetLine[] {
  const file = `.github/yoke.yml of ${repo}`;
  const whole: BudgetLine[] = [];
  const add = (owner: string | null, period: BudgetPeriod, limitUsd: number | null | undefined, setting: string) => {
    if (limitUsd !== null && limitUsd !== undefined)
      whole.push({ repo: owner, period, ...periodOf(now, period), limitUsd, newWork: false, setting });
  };
  add(repo, 'day', budget?.daily_usd, `budget.daily_usd in ${file}`);
  add(repo, 'month', budget?.monthly_usd, `budget.monthly_usd in ${file}`);
  add(null, 'day', fleet.dailyUsd, 'YOKE_DAILY_USD');
  add(null, 'month', fleet.monthlyUsd, 'YOKE_MONTHLY_USD');
  if (!isAfkKind(kind)) return whole;
  // New work may take only its share of each budget, so that finishing work in flight always has room.
  const shares = whole.flatMap((line): BudgetLine[] => {
    const share = line.repo === null ? fleet.newWorkShare : (budget?.new_work_share ?? 1);
    if (share >= 1) return [];
    const setting = line.repo === null ? 'YOKE_NEW_WORK_SHARE' : `budget.new_work_share in ${file}`;
    return [{ ...line, limitUsd: Math.round(line.limitUsd * share * 100) / 100, newWork: true, setting }];
  });
  return [...whole, ...shares];
}

/**
 * BU02: what a run reserves as it launches: nothing for a lander (it runs the repository's validate.sh and
 * calls no model); otherwise its whole limit, `agent.max_usd`, or, where a budget applies and none is set,
 * DEFAULT_RUN_USD or the smallest budget if that is less. Null: nothing limits it and no budget applies.
 */
export function reservationFor(kind: RunKind, maxUsd: number | undefined, lines: readonly BudgetLine[]): number | null {
  if (kind === 'lander') return 0;
  if (maxUsd !== undefined) return maxUsd;
  return lines.length ? Math.min(DEFAULT_RUN_USD, ...lines.map((l) => l.limitUsd)) : null;
}

/** What the runs launched this month cost the budgets so far, per repository: all of it, and new work's. */
export interface RepoCharges {
  day: number;
  month: number;
  dayNewWork: number;
  monthNewWork: number;
}

export const NO_CHARGES: RepoCharges = { day: 0, month: 0, dayNewWork: 0, monthNewWork: 0 };

const field = (line: Pick<BudgetLine, 'period' | 'newWork'>): keyof RepoCharges =>
  line.period === 'day' ? (line.newWork ? 'dayNewWork' : 'day') : line.newWork ? 'monthNewWork' : 'month';

/**
 * The charges against the budgets as this pass knows them: read once before it (the store's sums), with
 * each reservation it makes added as it makes it.
 */
export class BudgetLedger {
  private readonly byRepo: Map<string, RepoCharges>;
  private readonly holding: Pick<Holding, 'id' | 'repo' | 'kind' | 'launchedAt' | 'reservedUsd' | 'live'>[];

  /** `holdings`: the runs whose reservations the charges hold for want of a reported cost (live, or unsettled). */
  constructor(charges: ReadonlyMap<string, RepoCharges>, holdings: readonly Holding[] = []) {
    this.byRepo = new Map([...charges].map(([k, v]) => [k, { ...v }]));
    this.holding = [...holdings];
  }

  /** BU02: the runs whose reservations a budget holds: how many are live, and which ended unsettled. */
  holders(line: Pick<BudgetLine, 'repo' | 'since' | 'newWork'>): Holders {
    return holdersOf(this.holding, line);
  }

  /** What a budget holds now: its repository's charges, or the fleet's. */
  charged(line: Pick<BudgetLine, 'repo' | 'period' | 'newWork'>): number {
    const f = field(line);
    if (line.repo !== null) return this.byRepo.get(line.repo)?.[f] ?? 0;
    let sum = 0;
    for (const c of this.byRepo.values()) sum += c[f];
    return sum;
  }

  /** A reservation made in this pass. */
  add(repo: string, kind: RunKind, usd: number): void {
    const c = this.byRepo.get(repo) ?? { ...NO_CHARGES };
    c.day += usd;
    c.month += usd;
    if (isAfkKind(kind)) {
      c.dayNewWork += usd;
      c.monthNewWork += usd;
    }
    this.byRepo.set(repo, c);
    // A run this pass launched: live, counted in every period from now on.
    if (usd > 0) this.holding.push({ id: '', repo, kind, launchedAt: Infinity, reservedUsd: usd, live: true });
  }
}

/** BU02: the runs whose reservations a budget holds: live ones give back what they do not spend as they report. */
export interface Holders {
  live: number;
  unsettled: { id: string; usd: number }[];
}

export const NO_HOLDERS: Holders = { live: 0, unsettled: [] };

/** BU02: of the runs holding reservations, those a budget counts: how many are live, and which ended unsettled. Pure. */
export function holdersOf(
  holding: readonly Pick<Holding, 'id' | 'repo' | 'kind' | 'launchedAt' | 'reservedUsd' | 'live'>[],
  line: Pick<BudgetLine, 'repo' | 'since' | 'newWork'>,
): Holders {
  const held = holding.filter(
    (h) =>
      h.launchedAt >= line.since &&
      (line.repo === null || sameRepo(h.repo, line.repo)) &&
      (!line.newWork || isAfkKind(h.kind)),
  );
  return {
    live: held.filter((h) => h.live).length,
    unsettled: held.filter((h) => !h.live).map((h) => ({ id: h.id, usd: h.reservedUsd })),
  };
}

/** Sums are of floating dollars: a reservation that fits to the millionth of a cent fits. */
const EPSILON = 1e-9;

/** BU01: the first budget this reservation would take past its limit, with what it holds; null when it fits every one. */
export function overBudget(
  lines: readonly BudgetLine[],
  charged: (line: BudgetLine) => number,
  reserve: number,
): { line: BudgetLine; charged: number } | null {
  for (const line of lines) {
    const held = charged(line);
    if (held + reserve > line.limitUsd + EPSILON) return { line, charged: held };
  }
  return null;
}

const usd = (n: number) => n.toFixed(2);

/**
 * BU03: why a run waits for money, naming the budget, what it holds, this run's limit, and what ends the wait:
 * a live run reporting, an unsettled run settled, the budget's next period, or (a limit larger than the whole
 * budget) nothing but a change of setting.
 */
export function budgetWait(
  repo: string,
  over: { line: BudgetLine; charged: number },
  reserve: number,
  holders: Holders,
): Refusal {
  const { line } = over;
  return makeRefusal('budget_reserved', {
    repo,
    budget: `${line.repo === null ? 'the fleet' : line.repo}'s ${line.period === 'day' ? 'daily' : 'monthly'} budget${line.newWork ? ' for new work' : ''}`,
    held: usd(over.charged),
    limit: usd(line.limitUsd),
    reserve: usd(reserve),
    until: new Date(line.until).toISOString().replace('.000Z', 'Z'),
    setting: line.setting,
    never: reserve > line.limitUsd + EPSILON,
    live: holders.live,
    unsettled: holders.unsettled.map((u) => `${u.id} $${usd(u.usd)}`).join(', '),
    unsettledCount: holders.unsettled.length,
    unsettledUsd: usd(holders.unsettled.reduce((t, u) => t + u.usd, 0)),
  });
}

/** BU06: one budget as the dashboards show it: what it holds of its limit, and how long it lasts at today's rate. */
export interface BudgetStatus {
  repo: string | null;
  period: BudgetPeriod;
  limitUsd: number;
  heldUsd: number;
  /** When it starts again (ISO, UTC). */
  until: string;
  /** The runway at the rate it has been spent since its period began, in words. */
  runway: string;
}

/** BU06: the budgets' standing now, from the pass's ledger: held of limit, and the runway at the current rate. Pure. */
export function budgetStatus(lines: readonly BudgetLine[], ledger: BudgetLedger, now: number): BudgetStatus[] {
  return lines
    .filter((l) => !l.newWork)
    .map((l) => {
      const held = ledger.charged(l);
      const until = new Date(l.until).toISOString().replace('.000Z', 'Z');
      // The rate since the period began, over at least an hour (a run at 00:05 is not a rate).
      const perHour = held / Math.max(1, (now - l.since) / 3_600_000);
      const left = l.limitUsd - held;
      const runway =
        left <= 0
          ? `spent: nothing more launches until ${until}`
          : perHour === 0
            ? 'nothing spent yet'
            : now + (left / perHour) * 3_600_000 >= l.until
              ? `lasts the ${l.period} at $${usd(perHour)}/h`
              : `at $${usd(perHour)}/h it runs out around ${new Date(now + (left / perHour) * 3_600_000).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
      return {
        repo: l.repo,
        period: l.period,
        limitUsd: l.limitUsd,
        heldUsd: Math.round(held * 100) / 100,
        until,
        runway,
      };
    });
}
