import { describe, expect, it } from 'vitest';
import { dashboardIssueBody, type DashboardIssueView } from '../../src/fleet/notices/messages.js';
import { makeRefusal } from '../../src/kernel/codes/table.js';
import { AUTOLAND, addClaimPull, makeHarness } from '../helpers/fleet.js';

// The dashboard issue of each repository: its body is a pure function of what
// the pass read and decided, and is written only when it changes.

const bodiesOf = (h: ReturnType<typeof makeHarness>, repo: string) => {
  const created = h.forge.createdIssues.filter((i) => i.repo === repo && i.labels.includes('yoke:control'));
  const number = created[0]?.number;
  return {
    created,
    edits: h.forge.issueUpdates
      .filter((u) => u.repo === repo && u.number === number && u.change.body !== undefined)
      .map((u) => u.change.body!),
  };
};

describe('the dashboard issue', () => {
  it('shows what waits and why, and is edited only when that changes', async () => {
    const h = makeHarness({ policy: { globalCap: 1 } });
    h.forge.addRepo('acme/api', AUTOLAND);
    h.forge.addIssue('acme/api', 1);
    h.forge.addIssue('acme/api', 2);
    await h.engine.schedulerTick();
    const first = bodiesOf(h, 'acme/api');
    expect(first.created).toHaveLength(1);
    const body = first.created[0]!.body;
    expect(body).toContain(
      '### Live runs\n- `' +
        h.launcher.starts[0]!.runId +
        '` afk_auto [#1](https://github.test/acme/api/issues/1) Issue 1',
    );
    expect(body).toContain(
      '### Waiting, in the order the next pass takes it\n- [#2](https://github.test/acme/api/issues/2) Issue 2 (new work): `at_cap` Waits for a slot: 1 run(s) are live and acme/api may have at most 1 at once.',
    );
  });

  it('is edited only when its text changes: passes that read an unchanged repository write nothing', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', { ...AUTOLAND, auto: false });
    h.forge.addIssue('acme/api', 1);
    await h.engine.schedulerTick();
    await h.engine.schedulerTick();
    await h.engine.reaperTick();
    const { created, edits } = bodiesOf(h, 'acme/api');
    expect([created.length, edits]).toEqual([1, []]);
    expect(h.forge.calls.readRepo).toBeGreaterThanOrEqual(3); // it was read each time, and found the same
    // A claim PR gets a lander: one edit shows it live.
    await addClaimPull(h, 'acme/api', { number: 10, issue: 5, headSha: 'abc1234' });
    await h.engine.schedulerTick();
    await h.engine.schedulerTick();
    const after = bodiesOf(h, 'acme/api').edits;
    expect(after).toHaveLength(1);
    expect(after[0]).toContain('lander [#10](https://github.test/acme/api/pull/10) PR 10');
    expect(after[0]).not.toBe(created[0]!.body);
  });

  it('is not created when the opt-in file says dashboard_issue: false, and an existing yoke:control issue is reused', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/quiet', { dashboard_issue: false });
    h.forge.addRepo('acme/api', {});
    h.forge.addIssue('acme/api', 9, ['yoke:control']);
    await h.engine.schedulerTick();
    expect(h.forge.createdIssues).toEqual([]);
    expect(h.forge.issueUpdates.map((u) => [u.repo, u.number])).toEqual([['acme/api', 9]]);
  });

  it('SC03 opens a new installation’s dashboard issues a few per pass, and none while content-creating writes are short', async () => {
    const h = makeHarness({ policy: { dashboardIssuesPerPass: 2 } });
    for (const r of ['acme/a', 'acme/b', 'acme/c']) h.forge.addRepo(r, {});
    h.forge.contentWrites.set(1, 3); // below what a new issue must leave for comments and notices
    await h.engine.schedulerTick();
    expect(h.forge.createdIssues).toEqual([]);
    h.forge.contentWrites.delete(1);
    await h.engine.schedulerTick();
    expect(h.forge.createdIssues.map((i) => i.repo)).toEqual(['acme/a', 'acme/b']);
    await h.engine.schedulerTick();
    expect(h.forge.createdIssues.map((i) => i.repo)).toEqual(['acme/a', 'acme/b', 'acme/c']);
  });

  it('TR33 BU06 says paused with the command that recovers, why each fix started, what each issue cost this week, and keeps outside titles as text', () => {
    const view: DashboardIssueView = {
      repo: 'acme/api',
      webUrl: 'https://github.com',
      autoLoop: true,
      autoFrom: 'command',
      failures: 3,
      threshold: 3,
      paused: true,
      live: [
        {
          id: 'r1',
          kind: 'lander',
          subject: 'pr#8',
          title: 'Fix [it](https://evil.test) @everyone <b>now</b>',
          why: null,
          workflowUrl: 'https://github.com/acme/api/actions/runs/5',
        },
        // TR33: a fix says why it started, with the login as text, so the dashboard notifies no one.
        { id: 'r2', kind: 'fix', subject: 'pr#9', title: 'Add a parser', why: 'a review by @maint', workflowUrl: null },
      ],
      waiting: [
        {
          repo: 'acme/api',
          stage: 'new_work',
          subject: 'issue#4',
          title: '# heading',
          ...(({ code, message, recovery }) => ({ code, message, recovery }))(
            makeRefusal('repo_paused', { repo: 'acme/api', threshold: 3 }),
          ),
        },
      ],
      stuck: [{ number: 6, title: 'Add a parser' }],
      owed: [{ issue: 2, pr: 5 }],
      spentToday: 4.5,
      dailyUsd: 10,
      issueCosts: [
        { issue: 2, usd: 3.25, runs: 3 },
        { issue: 4, usd: 1.25, runs: 1 },
      ],
    };
    expect(dashboardIssueBody(view)).toBe(
      [
        'yoke keeps this issue current for acme/api: it rewrites this text when what it shows changes. Comment `/yoke status` for more, or close the issue and set `dashboard_issue: false` in `.github/yoke.yml` to stop it.',
        '',
        '### Auto loop',
        '**on** (set by `/yoke auto on`). To stop starting new work: comment `/yoke auto off` here.',
        '',
        '**Paused:** acme/api is paused: it reached 3 consecutive AFK failures, and only a reset lifts the pause.\n\n**To recover:** Comment `/yoke reset` on any issue of acme/api, or run `yoke repo reset acme/api`.',
        '',
        '### Live runs',
        '- `r1` lander [#8](https://github.com/acme/api/pull/8) Fix \\[it\\]\\(https://evil.test\\) \\@everyone \\<b\\>now\\</b\\> · [workflow run](https://github.com/acme/api/actions/runs/5)',
        '- `r2` fix [#9](https://github.com/acme/api/pull/9) Add a parser, for a review by \\@maint',
        '',
        '### Waiting, in the order the next pass takes it',
        '- [#4](https://github.com/acme/api/issues/4) \\# heading (new work): `repo_paused` acme/api is paused: it reached 3 consecutive AFK failures, and only a reset lifts the pause. To recover: Comment `/yoke reset` on any issue of acme/api, or run `yoke repo reset acme/api`.',
        '',
        '### Stuck PRs',
        '- [#6](https://github.com/acme/api/pull/6) Add a parser: its fix attempts are used up. Repair it by hand, then comment `/yoke land` on it.',
        '',
        '### Delivery owed',
        '- [#2](https://github.com/acme/api/issues/2), merged in [#5](https://github.com/acme/api/pull/5)',
        '',
        '### Spend',
        '$4.50 reported today (UTC) of a daily budget of $10.00 (`budget.daily_usd`).',
        '',
        'What each issue cost this week (its AFK runs, landers and fixes, as they reported):',
        '- [#2](https://github.com/acme/api/issues/2): $3.25 over 3 run(s)',
        '- [#4](https://github.com/acme/api/issues/4): $1.25 over 1 run(s)',
      ].join('\n'),
    );
  });
});
