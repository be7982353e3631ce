import { describe, expect, it } from 'vitest';
import { formatSummary, SUMMARY_LEGEND, type IssueSummary } from '../../sandbox/summary.js';
import { sandboxSettings } from '../../sandbox/env.js';

// The sandbox's end table: a block per issue, within 100 columns, and a failed run says why.

const issue = (over: Partial<IssueSummary>): IssueSummary => ({
  number: 1,
  title: 'Add a shout helper',
  state: 'merged',
  runs: [
    { id: 'r1', kind: 'afk_auto', outcome: 'success', why: null, failed: null },
    { id: 'r2', kind: 'lander', outcome: 'accepted', why: null, failed: null },
  ],
  verdicts: ['accept@8899561/4db87cc'],
  merge: '#7 → bc5d77c',
  deployment: 'dr-64f7aaad8d (succeeded)',
  qa: 'accepted',
  closeout: 'delivered #1',
  wait: null,
  ...over,
});

describe("the sandbox's end table", () => {
  it('shows each issue as a block: its merge, runs, verdicts and delivery; a run that failed with its whole reason, folded within 100 columns', () => {
    const reason =
      'codex failed: codex cannot start inside the agent\'s sandbox: it said "codex: 1: exec: codex: not found". It is installed at /home/runner/.npm-global/lib/codex.js, under /home/runner, which the sandbox hides.';
    const text = formatSummary([
      issue({}),
      issue({
        number: 2,
        title: 'Add a reverse helper',
        state: 'open',
        runs: [{ id: 'r3', kind: 'afk_auto', outcome: 'failure', why: null, failed: reason }],
        verdicts: [],
        merge: '-',
        deployment: '-',
        qa: '-',
        closeout: '-',
      }),
    ]);
    expect(text).toBe(
      [
        '#1 Add a shout helper: merged as #7 → bc5d77c',
        '   runs       afk_auto:success lander:accepted',
        '   verdicts   accept@8899561/4db87cc',
        '   delivery   dr-64f7aaad8d (succeeded), QA accepted, close-out delivered #1',
        '#2 Add a reverse helper: open',
        '   runs       afk_auto:failure',
        '   failed     r3: codex failed: codex cannot start inside the agent\'s sandbox: it said "codex: 1:',
        '              exec: codex: not found". It is installed at /home/runner/.npm-global/lib/codex.js,',
        '              under /home/runner, which the sandbox hides.',
      ].join('\n'),
    );
    expect(text.split('\n').every((l) => l.length <= 100)).toBe(true);
  });

  it('BU03 shows what an open issue waits for, as the last pass said it: with --budget, a wait for money', () => {
    const text = formatSummary([
      issue({
        number: 3,
        title: 'Add a pad helper',
        state: 'open',
        runs: [],
        verdicts: [],
        merge: '-',
        deployment: '-',
        qa: '-',
        closeout: '-',
        wait: "budget_reserved: Waits for money: the fleet's daily budget holds $0.59 of its $3.00.",
      }),
    ]);
    expect(text).toBe(
      [
        '#3 Add a pad helper: open',
        '   runs       -',
        "   waits      budget_reserved: Waits for money: the fleet's daily budget holds $0.59 of its $3.00.",
      ].join('\n'),
    );
  });
});

describe("the end table's legend", () => {
  it('says what each notation of the table means, within 100 columns', () => {
    expect(SUMMARY_LEGEND).toBe(
      [
        'Reading it: runs are kind:outcome in order, a fix with [why it started]. A verdict',
        "accept@HEAD/BASE+#N is a lander's verdict on HEAD (the claim PR's commit), judged on BASE (main as",
        'it was then) with PR #N merged onto it first (a stack). "close-out delivered #1": a deployment run',
        'shipped it to production, and yoke closed issue #1.',
      ].join('\n'),
    );
    expect(SUMMARY_LEGEND.split('\n').every((l) => l.length <= 100)).toBe(true);
  });
});

describe("the sandbox's settings", () => {
  it('BU03 passes every YOKE_* setting it does not wire itself to its yoke (a budget, a cap), and ignores what is not a setting', () => {
    expect(
      sandboxSettings({
        YOKE_DAILY_USD: '3',
        YOKE_GLOBAL_CAP: '4',
        YOKE_REQUIRE_BROWSER: '1',
        HOME: '/root',
        YOKE_MONTHLY_USD: '',
      }),
    ).toEqual({ ok: true, env: { YOKE_DAILY_USD: '3', YOKE_GLOBAL_CAP: '4' } });
  });

  it('refuses a setting it wires itself, saying why and what to use instead, rather than ignore it', () => {
    expect(sandboxSettings({ YOKE_DB_PATH: '/srv/yoke.db', YOKE_LAUNCHER: 'command', YOKE_DAILY_USD: '3' })).toEqual({
      ok: false,
      problems: [
        'YOKE_DB_PATH is set, but the sandbox sets it itself: the sandbox keeps its store in its own data folder (--postgres for PostgreSQL). Unset it to run the sandbox.',
        'YOKE_LAUNCHER is set, but the sandbox sets it itself: use --launcher. Unset it to run the sandbox.',
      ],
    });
  });
});
