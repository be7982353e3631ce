import { describe, expect, it } from 'vitest';
import { prose, reasonOf, renderWaiting, runResult, time } from '../../src/http/dashboard-parts.js';

describe("the dashboard's run reasons", () => {
  it("a failed run's reason is yoke's own, else the first line of what the run reported; a success shows none", () => {
    expect(
      reasonOf({
        status: 'ended',
        outcome: 'failure',
        outcomeReason: null,
        summary: 'Error: issue #14 names no demo task\nat line 3',
      }),
    ).toBe('Error: issue #14 names no demo task');
    expect(
      reasonOf({
        status: 'ended',
        outcome: 'timeout',
        outcomeReason: 'ran past its 60-minute budget',
        summary: 'half done',
      }),
    ).toBe('ran past its 60-minute budget');
    expect(reasonOf({ status: 'ended', outcome: 'success', outcomeReason: null, summary: 'Added shout()' })).toBe('');
    expect(
      reasonOf({ status: 'ended', outcome: 'failure', outcomeReason: null, summary: 'x'.repeat(300) }),
    ).toHaveLength(200);
  });
});

describe("the dashboard's waiting table", () => {
  it("SP04 a repository's whole work waiting (at the cap, disabled, unread) reads 'all its work · every stage', not one stage's name", () => {
    const row = renderWaiting(
      [
        {
          repo: 'acme/api',
          stage: 'lander',
          subject: null,
          title: null,
          code: 'at_cap',
          message: 'At the cap.',
          recovery: 'Nothing to do.',
        },
      ],
      'https://github.test',
    );
    expect(row).toContain('<td>all its work</td>\n<td>every stage</td>');
  });
});

describe("yoke's own prose on the dashboard", () => {
  it("shows a recovery's `code spans` as code, and escapes everything else", () => {
    expect(prose('Comment `/yoke reset` on <any> issue')).toBe('Comment <code>/yoke reset</code> on &lt;any&gt; issue');
  });
});

describe('how the dashboard and the CLI say a run ended', () => {
  it('a lander says what it decided, not "success (reject)"; other runs say their outcome', () => {
    expect(runResult({ status: 'ended', outcome: 'success', verdict: 'reject' })).toBe('rejected');
    expect(runResult({ status: 'ended', outcome: 'success', verdict: 'accept' })).toBe('accepted');
    expect(runResult({ status: 'ended', outcome: 'failure', verdict: null })).toBe('failure');
    expect(runResult({ status: 'live', outcome: null, verdict: null })).toBe('live');
  });
});

describe('times on the dashboard', () => {
  it('are in UTC and say so, never a raw ISO string', () => {
    expect(time(Date.UTC(2026, 11, 3, 17, 38, 16))).toBe('2026-12-03 17:38:16 UTC');
    expect(time(null)).toBe('');
  });
});
