import { describe, expect, it } from 'vitest';
import { BudgetLedger, budgetLines, budgetStatus } from '../../src/fleet/money/budgets.js';
import { renderBudgets, renderIssueSpend, renderSpendChart } from '../../src/http/pages/dashboard-spend.js';

// BU06 on the dashboards: the week's spend as a chart against the daily budget, the budgets' standing with
// their runway, and the costliest issues.

const day = (d: string, usd: number) => ({ repo: 'acme/api', day: d, usd, inputTokens: 1, outputTokens: 1, runs: 1 });

describe('the spend chart', () => {
  it('BU06 draws one bar per day of the last seven, scaled to the budget, a dashed budget line, and marks a day over it', () => {
    const svg = renderSpendChart([day('2026-11-30', 12), day('2026-11-28', 5)], '2026-11-30', 10);
    expect(
      svg.startsWith(
        '<svg id="spend-chart" viewBox="0 0 560 160" role="img" aria-label="Spend per day over the last 7 days against a daily budget of $10.00">',
      ),
    ).toBe(true);
    const titles = [...svg.matchAll(/<title>([^<]*)<\/title>/g)].map((m) => m[1]);
    expect(titles).toEqual([
      '2026-11-24: $0.00',
      '2026-11-25: $0.00',
      '2026-11-26: $0.00',
      '2026-11-27: $0.00',
      '2026-11-28: $5.00',
      '2026-11-29: $0.00',
      '2026-11-30: $12.00',
      'daily budget $10.00',
    ]);
    // The tallest bar ($12, over the budget) reaches near the top; $5 is under half of it; the budget line sits between.
    const heights = [...svg.matchAll(/height="([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(heights[6]! / heights[4]!).toBeCloseTo(12 / 5, 1);
    expect(svg.match(/class="day over"/g)).toHaveLength(1);
    expect(svg).toContain('<text x="556" y="');
    expect(renderSpendChart([], '2026-11-30', null)).not.toContain('budget');
  });
});

describe('the budgets and the costliest issues', () => {
  it("BU06 say what each budget holds, when it starts again and its runway at today's rate", () => {
    const now = Date.UTC(2026, 10, 30, 12);
    const lines = budgetLines(
      'acme/api',
      { daily_usd: 10, monthly_usd: 100 },
      { dailyUsd: 20, monthlyUsd: null, newWorkShare: 1 },
      'fix',
      now,
    );
    const ledger = new BudgetLedger(new Map([['acme/api', { day: 3, month: 99.5, dayNewWork: 0, monthNewWork: 0 }]]));
    const status = budgetStatus(lines, ledger, now);
    expect(status.map((s) => [s.repo, s.period, s.heldUsd, s.limitUsd, s.runway])).toEqual([
      ['acme/api', 'day', 3, 10, 'lasts the day at $0.25/h'],
      ['acme/api', 'month', 99.5, 100, 'at $0.14/h it runs out around 2026-11-30 15:33 UTC'],
      [null, 'day', 3, 20, 'lasts the day at $0.25/h'],
    ]);
    expect(renderBudgets(status)).toContain(
      '<tr><td>acme/api</td><td>monthly</td><td>$99.50 of $100.00</td><td>2026-12-01T00:00:00Z</td><td>at $0.14/h it runs out around 2026-11-30 15:33 UTC</td></tr>',
    );
    const spent = new BudgetLedger(new Map([['acme/api', { day: 10, month: 10, dayNewWork: 0, monthNewWork: 0 }]]));
    expect(budgetStatus(lines.slice(0, 1), spent, now)[0]!.runway).toBe(
      'spent: nothing more launches until 2026-12-01T00:00:00Z',
    );
    expect(renderBudgets([])).toBe('<p>No budget is set: runs are limited by <code>agent.max_usd</code> alone.</p>');
    expect(
      renderIssueSpend(
        [
          {
            repo: 'acme/api',
            issue: 7,
            usd: 4.2,
            inputTokens: 100,
            outputTokens: 20,
            runs: 3,
            byKind: { afk: 3, fix: 1.2, lander: 0 },
          },
        ],
        'https://github.test',
      ),
    ).toContain(
      '<tr><td><a href="https://github.test/acme/api/issues/7">acme/api#7</a></td><td>$4.20</td><td>3</td><td>$3.00</td><td>$1.20</td><td>$0.00</td><td>100 / 20</td></tr>',
    );
  });
});
