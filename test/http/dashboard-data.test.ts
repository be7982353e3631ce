import { describe, expect, it } from 'vitest';
import { buildDashboardData } from '../../src/http/pages/dashboard-data.js';
import { renderDashboardMain } from '../../src/http/pages/dashboard.js';
import { AUTOLAND, addClaimPull, makeHarness, report } from '../helpers/fleet.js';

// A repository's page shows what the fleet page does not: the settings as
// yoke read them, its dashboard issue, its open claim PRs with the check run
// yoke wrote and the lander's verdict for that head.

describe("a repository's dashboard page", () => {
  it('shows the settings as read, the dashboard issue, and each open claim PR with its check run and verdict', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', { ...AUTOLAND, budget_minutes: { afk: 45 } });
    h.forge.addRepo('acme/web', AUTOLAND);
    await addClaimPull(h, 'acme/api', { number: 7, issue: 3, headSha: 'abc1234def' });
    await h.engine.schedulerTick();
    const lander = h.launcher.starts.find((s) => s.kind === 'lander')!;
    await report(h, lander.runId, 'success', 'reject');
    await h.engine.reaperTick();

    const data = await buildDashboardData(h.fleet, h.engine.lastPass, {
      webUrl: 'https://github.test',
      refreshMs: 10_000,
      repo: 'acme/api',
    });
    const page = data.repoPage!;
    expect(page.settings).toContain('afk: 45');
    expect(page.settings).toContain('autoland:\n  enabled: true');
    expect(page.dashboardIssue).toBe((await h.store.dashboardIssues.get('acme/api'))!.issueNumber);
    expect(page.claims).toEqual([
      {
        pr: 7,
        title: expect.any(String),
        headSha: 'abc1234def',
        author: expect.any(String),
        issue: 3,
        check: { status: 'completed', conclusion: 'failure', run: lander.runId },
        verdict: { verdict: 'reject', run: lander.runId },
        landing: 'rejected on c0: waits for a fix (or a new push, or /yoke land)',
        cost: { usd: 0, runs: 0 },
      },
    ]);

    const html = renderDashboardMain(data, { kind: 'repo', repo: 'acme/api' });
    expect(html).toContain('<section id="settings"><h2>Settings</h2>');
    expect(html).toContain(
      `<a href="https://github.test/acme/api/issues/${page.dashboardIssue}">#${page.dashboardIssue}</a>`,
    );
    expect(html).toMatch(
      new RegExp(
        `<td class="check">completed · failure <small>\\(${lander.runId}\\)</small></td><td class="verdict">reject <small>by <code>${lander.runId}</code></small></td><td class="landing">rejected on c0: waits for a fix \\(or a new push, or /yoke land\\)</td><td class="cost">\\$0\\.00 over 0 run\\(s\\)</td>`,
      ),
    );
    // It is not the fleet page again: no other repository, no fleet-wide summary or timeline.
    expect(html).not.toContain('acme/web');
    expect(html).not.toContain('id="summary"');
    expect(html).not.toContain('id="timeline"');

    // The fleet page has no repository's settings, and shows every repository.
    const fleet = renderDashboardMain(
      await buildDashboardData(h.fleet, h.engine.lastPass, { webUrl: 'https://github.test', refreshMs: 10_000 }),
      { kind: 'fleet' },
    );
    expect(fleet).not.toContain('id="settings"');
    expect(fleet).toContain('acme/web');
  });

  it('says when the opt-in file was refused instead of showing settings', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', { auto: 'sometimes' });
    await h.engine.schedulerTick();
    const html = renderDashboardMain(
      await buildDashboardData(h.fleet, h.engine.lastPass, {
        webUrl: 'https://github.test',
        refreshMs: 10_000,
        repo: 'acme/api',
      }),
      { kind: 'repo', repo: 'acme/api' },
    );
    expect(html).toMatch(/<section id="settings"><h2>Settings<\/h2><p>Refused: [^<]*auto/);
  });

  it('shows live runs with how long each has run and when its deadline falls', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', AUTOLAND);
    await addClaimPull(h, 'acme/api', { number: 7, issue: 3, headSha: 'abc1234def' });
    await h.engine.schedulerTick();
    const run = (await h.store.runs.listLive())[0]!;
    h.clock.advance(4 * 60_000 + 12_000);
    const html = renderDashboardMain(
      await buildDashboardData(h.fleet, h.engine.lastPass, { webUrl: 'https://github.test', refreshMs: 10_000 }),
      { kind: 'fleet' },
    );
    const left = run.budgetDeadline - h.clock.now();
    expect(left).toBeGreaterThan(0);
    expect(html).toContain(`<td class="elapsed">4m 12s</td>`);
    expect(html).toContain(
      `(in ${Math.floor(left / 60_000)}m ${String(Math.round(left / 1000) % 60).padStart(2, '0')}s)`,
    );
  });
});
