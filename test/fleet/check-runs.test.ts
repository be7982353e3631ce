import { describe, expect, it } from 'vitest';
import { CHECK_NAME, checkFor } from '../../src/fleet/landing/check-runs.js';
import type { Run } from '../../src/store/fleet/runs.js';
import { AUTOLAND, addClaimPull, makeHarness, report } from '../helpers/fleet.js';

// Each lander is a yoke/lander check run on the head it validates: in
// progress while it runs, completed with the recorded verdict, neutral when
// yoke gives up on the head. Written only when what it says changes.

const checksOf = (h: ReturnType<typeof makeHarness>) =>
  h.forge.checkRuns.map((c) => ({
    head: c.headSha,
    status: c.current.status,
    conclusion: c.current.conclusion,
    writes: c.writes.length,
  }));

describe('the yoke/lander check run', () => {
  it('is in progress while the lander runs and completes with its verdict, written once per change', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', AUTOLAND);
    await addClaimPull(h, 'acme/api', { number: 7, issue: 3, headSha: 'abc1234def' });
    await h.engine.schedulerTick();
    const lander = h.launcher.starts.find((s) => s.kind === 'lander')!;
    expect(h.forge.checkRuns).toHaveLength(1);
    expect(h.forge.checkRuns[0]!.current).toEqual({
      name: CHECK_NAME,
      status: 'in_progress',
      conclusion: null,
      externalId: lander.runId,
      detailsUrl: null,
      title: 'Validating abc1234 on c0',
      summary: `Lander run \`${lander.runId}\` is validating this head merged onto c0 (attempt 1 of 2).`,
    });
    // Passes that change nothing write nothing.
    await h.engine.schedulerTick();
    await h.engine.reaperTick();
    expect(checksOf(h)).toEqual([{ head: 'abc1234def', status: 'in_progress', conclusion: null, writes: 1 }]);

    await report(h, lander.runId, 'success', 'reject');
    await h.engine.reaperTick();
    expect(checksOf(h)).toEqual([{ head: 'abc1234def', status: 'completed', conclusion: 'failure', writes: 2 }]);
    expect(h.forge.checkRuns[0]!.current.title).toBe('Rejected at abc1234 on c0');
    expect(h.forge.checkRuns[0]!.current.summary).toBe(
      `Lander run \`${lander.runId}\` rejected this head merged onto c0, the base it would land on.\n\ntest`,
    );
    await h.engine.schedulerTick();
    expect(h.forge.checkRuns[0]!.writes).toHaveLength(2);
  });

  it('is neutral when yoke gives up on a head: its lander attempts ended without a verdict', async () => {
    const h = makeHarness({ policy: { landerAttemptsPerHead: 2 } });
    h.forge.addRepo('acme/api', AUTOLAND);
    await addClaimPull(h, 'acme/api', { number: 7, issue: 3, headSha: 'abc1234def' });
    for (let attempt = 0; attempt < 2; attempt++) {
      await h.engine.schedulerTick();
      h.launcher.finish(h.launcher.starts.filter((s) => s.kind === 'lander').at(-1)!.runId); // exits without reporting
      await h.engine.reaperTick();
      if (attempt === 0) expect(checksOf(h)[0]).toMatchObject({ status: 'in_progress', conclusion: null });
    }
    await h.engine.schedulerTick();
    expect(h.launcher.starts.filter((s) => s.kind === 'lander')).toHaveLength(2);
    // Written three times: the first attempt, the second, the give-up.
    expect(checksOf(h)).toEqual([{ head: 'abc1234def', status: 'completed', conclusion: 'neutral', writes: 3 }]);
    const check = h.forge.checkRuns[0]!.current;
    expect(check.title).toBe('yoke gave up on abc1234');
    expect(check.summary).toContain(
      'yoke gave up validating #7 of acme/api at abc1234: 2 lander run(s) ended without a verdict.',
    );
    expect(check.summary).toContain(
      'To recover: Push a new commit to #7, or comment `/yoke land` on it to try this head again.',
    );
  });

  it('is neutral on a head the PR moved past, and the new head gets a check run of its own', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', AUTOLAND);
    const { pull } = await addClaimPull(h, 'acme/api', { number: 7, issue: 3, headSha: 'aaaaaaa111' });
    await h.engine.schedulerTick();
    pull.headSha = 'bbbbbbb222';
    // The lander of the old head ends without a verdict; the next pass validates the new head.
    h.launcher.finish(h.launcher.starts.at(-1)!.runId);
    await h.engine.reaperTick();
    expect(checksOf(h)).toEqual([
      { head: 'aaaaaaa111', status: 'completed', conclusion: 'neutral', writes: 2 },
      { head: 'bbbbbbb222', status: 'in_progress', conclusion: null, writes: 1 },
    ]);
  });

  it('an installation that refuses check runs (no checks: write yet) is left for a while, not asked every pass', async () => {
    const h = makeHarness({ policy: { checkRetryMs: 600_000 } });
    h.forge.addRepo('acme/api', AUTOLAND);
    await addClaimPull(h, 'acme/api', { number: 7, issue: 3, headSha: 'abc1234def' });
    let attempts = 0;
    const create = h.forge.createCheckRun.bind(h.forge);
    let granted = false;
    h.forge.createCheckRun = async (repo, sha, check) => {
      attempts++;
      if (!granted) throw Object.assign(new Error('Resource not accessible by integration'), { status: 403 });
      return create(repo, sha, check);
    };
    await h.engine.schedulerTick();
    await h.engine.schedulerTick();
    await h.engine.reaperTick();
    expect([attempts, h.forge.checkRuns.length]).toEqual([1, 0]);
    // The lander ran regardless; once the permission is granted the check run appears after the wait.
    expect(h.launcher.starts.map((s) => s.kind)).toEqual(['lander']);
    granted = true;
    h.clock.advance(600_001);
    await h.engine.schedulerTick();
    expect([attempts, h.forge.checkRuns.map((c) => c.current.status)]).toEqual([2, ['in_progress']]);
  });

  it('links to the workflow run of a lander launched on Actions', () => {
    const run = {
      id: 'r1',
      repo: 'acme/api',
      kind: 'lander',
      subject: 'pr#7',
      prNumber: 7,
      headSha: 'abc1234def',
      status: 'ended',
      outcome: 'success',
      outcomeReason: null,
      verdict: 'accept',
      summary: 'All green.',
      launcher: 'actions',
      launcherRef: 'yoke-run.yml@main#4242',
      launchedAt: 1,
    } as unknown as Run;
    const cleared = {
      repo: 'acme/api',
      prNumber: 7,
      headSha: 'abc1234def',
      files: [],
      commentId: null,
      approvedBy: null,
      recordedAt: 1,
    };
    const { check } = checkFor(
      [run],
      { landerAttemptsPerHead: 2, webUrl: 'https://github.com' },
      { superseded: false, hold: cleared },
    );
    expect(check).toMatchObject({
      status: 'completed',
      conclusion: 'success',
      detailsUrl: 'https://github.com/acme/api/actions/runs/4242',
      title: 'Accepted at abc1234',
    });
  });

  it('TR14 an accept says success only once a pass has read what the head changes: before, it is still in progress', () => {
    const run = {
      id: 'r1',
      repo: 'acme/api',
      kind: 'lander',
      subject: 'pr#7',
      prNumber: 7,
      headSha: 'abc1234def',
      status: 'ended',
      outcome: 'success',
      outcomeReason: null,
      verdict: 'accept',
      summary: 'All green.',
      launcher: 'command',
      launcherRef: null,
      launchedAt: 1,
    } as unknown as Run;
    expect(
      checkFor([run], { landerAttemptsPerHead: 2, webUrl: 'https://github.com' }, { superseded: false, hold: null }),
    ).toEqual({
      written: 'in_progress:checking:r1',
      check: {
        name: 'yoke/lander',
        externalId: 'r1',
        detailsUrl: null,
        status: 'in_progress',
        conclusion: null,
        title: 'Accepted at abc1234; checking what it changes',
        summary:
          "Lander run `r1` accepted this head. yoke is reading which files it changes: one that touches a protected path waits for a person's approval.",
      },
    });
  });
});
