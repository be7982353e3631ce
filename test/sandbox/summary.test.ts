import { describe, expect, it } from 'vitest';
import { formatSummary, type IssueSummary } from '../../sandbox/summary.js';

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
});
