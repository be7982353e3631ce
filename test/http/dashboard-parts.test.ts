import { describe, expect, it } from 'vitest';
import { prose, reasonOf, renderRuns, renderWaiting, runResult, time } from '../../src/http/pages/dashboard-parts.js';
import type { PublicRun } from '../../src/fleet/notices/report.js';

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

describe("the dashboard's runs table", () => {
  const run = (over: Partial<PublicRun>): PublicRun => ({
    id: 'r1',
    repo: 'acme/api',
    kind: 'fix',
    subject: 'pr#7',
    issueNumber: 1,
    prNumber: 7,
    headSha: 'c'.repeat(40),
    baseSha: null,
    stack: [],
    landSha: null,
    status: 'ended',
    outcome: 'success',
    outcomeReason: null,
    reportedOutcome: 'success',
    verdict: null,
    summary: null,
    verdictCommentId: null,
    launchedAt: 0,
    budgetDeadline: 60_000,
    endedAt: 1000,
    launcher: 'command',
    launcherRef: null,
    capAtLaunch: 2,
    liveAtLaunch: 1,
    reportedAt: 500,
    cost: null,
    reservedUsd: null,
    title: null,
    settled: null,
    why: 'a review by @maint <b>',
    ...over,
  });

  it('TR33 says why each fix run started, escaped; other runs say nothing more', () => {
    const html = renderRuns(
      [run({}), run({ id: 'r2', kind: 'afk_auto', subject: 'issue#1', why: 'labelled yoke:afk' })],
      'https://github.test',
    );
    expect(html).toContain('<td>fix<br><small class="why">for a review by @maint &lt;b&gt;</small></td>');
    expect(html).toContain('<td>afk_auto</td>');
    expect(html).not.toContain('labelled yoke:afk');
  });
});
