import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { periodOf } from '../../src/fleet/money/budgets.js';
import { AUTOLAND, ManualClock, addClaimPull, makeHarness, type Harness } from '../helpers/fleet.js';
import { testEngine } from '../helpers/test-store.js';

// BU01-BU03 under random interleavings: repositories with random daily and monthly budgets, shares and
// limits, a fleet budget, issues and claim PRs arriving, runs finishing with random costs (never past what
// they reserved) or with none, launches that fail, and days and months passing. After every step, no budget
// holds more than its limit (what runs launched in its period reported, plus what live and unreported runs
// reserved), and every run that calls the model launched holding its whole limit.

type Step =
  | { t: 'pass' }
  | { t: 'reap' }
  | { t: 'finish'; pick: number; cents: number; report: boolean }
  | { t: 'issue'; repo: number }
  | { t: 'claim'; repo: number }
  | { t: 'fail_next' }
  | { t: 'later'; hours: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ t: 'pass' as const }) },
  { weight: 3, arbitrary: fc.constant({ t: 'reap' as const }) },
  {
    weight: 6,
    arbitrary: fc.record({
      t: fc.constant('finish' as const),
      pick: fc.nat(20),
      cents: fc.nat(100),
      report: fc.nat(4).map((n) => n > 0),
    }),
  },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('issue' as const), repo: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('claim' as const), repo: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.constant({ t: 'fail_next' as const }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('later' as const), hours: fc.integer({ min: 1, max: 200 }) }) },
);

interface RepoBudget {
  daily: number | null;
  monthly: number | null;
  share: number | null;
  maxUsd: number | null;
}

const repoArb: fc.Arbitrary<RepoBudget> = fc.record({
  daily: fc.option(fc.integer({ min: 1, max: 12 }), { nil: null }),
  monthly: fc.option(fc.integer({ min: 5, max: 40 }), { nil: null }),
  share: fc.option(fc.constantFrom(0.5, 0.8), { nil: null }),
  maxUsd: fc.option(fc.constantFrom(1, 2, 3, 5), { nil: null }),
});

const worldArb = fc.record({
  repos: fc.array(repoArb, { minLength: 1, maxLength: 3 }),
  fleetDaily: fc.option(fc.integer({ min: 2, max: 20 }), { nil: null }),
  cap: fc.integer({ min: 1, max: 5 }),
});

const name = (i: number) => `acme/r${i}`;

/** Every budget that holds: what runs launched in its period cost it, by the rule the store keeps. */
async function checkBudgets(h: Harness, world: { repos: RepoBudget[]; fleetDaily: number | null }): Promise<number> {
  const runs = (await h.store.runs.listAll(10_000)).filter((r) => r.repo.startsWith('acme/'));
  const now = h.clock.now();
  // What each run costs, from what it reported or else the limit it was told at launch (a lander calls no
  // model; a launch that failed started nothing): the model's own account, not the store's reservation column.
  const told = new Map(h.launcher.starts.map((x) => [x.runId, x.limits.maxUsd ?? 0]));
  const charge = (r: (typeof runs)[number]) => r.cost?.usd ?? (r.kind === 'lander' ? 0 : (told.get(r.id) ?? 0));
  const held = (repo: string | null, period: 'day' | 'month', newWork: boolean) => {
    const { since } = periodOf(now, period);
    return runs
      .filter(
        (r) =>
          r.launchedAt >= since &&
          (repo === null || r.repo === repo) &&
          (!newWork || r.kind === 'afk_auto' || r.kind === 'afk_manual'),
      )
      .reduce((sum, r) => sum + charge(r), 0);
  };
  const within = (what: string, sum: number, limit: number) =>
    expect(sum, `${what}: ${sum} of ${limit}`).toBeLessThanOrEqual(limit + 1e-6);
  world.repos.forEach((b, i) => {
    if (b.daily !== null) within(`${name(i)} day`, held(name(i), 'day', false), b.daily);
    if (b.monthly !== null) within(`${name(i)} month`, held(name(i), 'month', false), b.monthly);
    if (b.share !== null && b.daily !== null)
      within(`${name(i)} day, new work`, held(name(i), 'day', true), Math.round(b.daily * b.share * 100) / 100);
  });
  if (world.fleetDaily !== null) within('fleet day', held(null, 'day', false), world.fleetDaily);
  // Every run that calls the model launched reserving its whole limit, and was told that limit.
  for (const s of h.launcher.starts.filter((x) => x.kind !== 'lander')) {
    const run = runs.find((r) => r.id === s.runId)!;
    if (run.reservedUsd !== null) expect(s.limits.maxUsd).toBe(run.reservedUsd);
  }
  return runs.filter((r) => r.reservedUsd && r.reservedUsd > 0).length;
}

describe('budgets under random interleavings (BU01-BU03)', () => {
  it('BU01 BU02 BU03 no budget ever holds more than its limit, and every run that calls the model launches holding its whole limit', async () => {
    let reserved = 0;
    let waited = 0;
    await fc.assert(
      fc.asyncProperty(worldArb, fc.array(stepArb, { minLength: 20, maxLength: 70 }), async (world, steps) => {
        const clock = new ManualClock(Date.UTC(2026, 10, 30, 20, 0, 0));
        const h = makeHarness({ clock, policy: { globalCap: world.cap, dailyUsd: world.fleetDaily } });
        try {
          world.repos.forEach((b, i) =>
            h.forge.addRepo(name(i), {
              ...AUTOLAND,
              auto: true,
              fix_forward: { enabled: true, max_attempts: 3 },
              ...(b.daily !== null || b.monthly !== null
                ? {
                    budget: {
                      ...(b.daily !== null ? { daily_usd: b.daily } : {}),
                      ...(b.monthly !== null ? { monthly_usd: b.monthly } : {}),
                      ...(b.share !== null ? { new_work_share: b.share } : {}),
                    },
                  }
                : {}),
              ...(b.maxUsd !== null ? { agent: { max_usd: b.maxUsd } } : {}),
            }),
          );
          let issue = 0;
          let pr = 100;
          for (const s of steps) {
            const repo = name(('repo' in s ? s.repo : 0) % world.repos.length);
            switch (s.t) {
              case 'pass': {
                const report = await h.engine.schedulerTick();
                waited += report.waiting.filter((w) => w.reason.code === 'budget_reserved').length;
                break;
              }
              case 'reap':
                await h.engine.reaperTick();
                break;
              case 'issue':
                h.forge.addIssue(repo, ++issue);
                break;
              case 'claim':
                await addClaimPull(h, repo, {
                  number: ++pr,
                  issue: ++issue,
                  headSha: pr.toString(16).padStart(40, '0'),
                });
                break;
              case 'fail_next':
                h.launcher.failNext = 1;
                break;
              case 'later':
                clock.advance(s.hours * 3_600_000);
                break;
              case 'finish': {
                const live = (await h.store.runs.listLive()).filter((r) => h.launcher.table.running.has(r.id));
                const run = live[s.pick % live.length];
                if (!run) break;
                if (s.report) {
                  // A run spends some of what it reserved, never more (the gateway stops it there).
                  const usd = Math.round((run.reservedUsd ?? 0) * s.cents) / 100;
                  await h.store.runs.recordReport(
                    run.id,
                    {
                      outcome: 'success',
                      verdict: run.kind === 'lander' ? (s.cents % 2 ? 'accept' : 'reject') : null,
                      summary: null,
                      cost: { usd, inputTokens: 1, outputTokens: 1 },
                    },
                    clock.now(),
                  );
                }
                h.launcher.finish(run.id);
                break;
              }
            }
            reserved = Math.max(reserved, await checkBudgets(h, world));
          }
        } finally {
          await h.store.close();
        }
      }),
      // On PostgreSQL (npm run test:postgres) 50: npm test runs all 150 on SQLite.
      { numRuns: testEngine === 'PostgreSQL' ? 50 : 150 },
    );
    // The property says something only if runs reserved money and others waited for it.
    expect(reserved).toBeGreaterThan(3);
    expect(waited).toBeGreaterThan(10);
  }, 300_000);
});
