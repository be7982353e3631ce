import { describe, expect, it } from 'vitest';
import { requestLand, resetRepo } from '../../src/fleet/runs/controls.js';
import { encodeMarker } from '../../src/forge/marker.js';
import { AUTOLAND, addClaimPull, makeHarness, recordVerdict, report, type Harness } from '../helpers/fleet.js';

// The trust boundaries at the engine's level: what counts as a claim, which
// verdict a merge follows, and the engine defects found on the same read.

const landers = (h: Harness) => h.launcher.starts.filter((s) => s.kind === 'lander').map((s) => s.subject);

describe('claims (TR04)', () => {
  it('TR04 a PR from a fork that names a real run of the issue is not a claim: no lander, no label, no record', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', AUTOLAND);
    await addClaimPull(h, 'acme/api', { number: 7, issue: 1, headSha: 'aaaaaaa', headRepo: 'mallory/api' });
    await h.engine.schedulerTick();
    expect(landers(h)).toEqual([]);
    expect(await h.store.claims.listForRepo('acme/api')).toEqual([]);
    expect(h.forge.labelsAdded).toEqual([]);
  });

  it('TR04 a yoke:claim label added by hand grants nothing', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', AUTOLAND);
    h.forge.addPull('acme/api', { number: 7, headSha: 'aaaaaaa', labels: ['yoke:claim'], body: 'Closes #1' });
    await recordVerdict(h, 'acme/api', 7, 'aaaaaaa', 'accept');
    await h.engine.schedulerTick();
    expect(landers(h)).toEqual([]);
    expect(h.forge.merges).toEqual([]);
  });

  it('TR04 a trailer naming a run of another issue, or a run another PR already claimed, is not a claim', async () => {
    const h = makeHarness({ policy: { globalCap: 5 } });
    h.forge.addRepo('acme/api', AUTOLAND);
    const { runId } = await addClaimPull(h, 'acme/api', { number: 7, issue: 1, headSha: 'aaaaaaa' });
    h.forge.addPull('acme/api', { number: 8, headSha: 'bbbbbbb', labels: [], body: `Closes #2\n\nYoke-Run: ${runId}` });
    h.forge.addPull('acme/api', { number: 9, headSha: 'ccccccc', labels: [], body: `Closes #1\n\nYoke-Run: ${runId}` });
    await h.engine.schedulerTick();
    expect((await h.store.claims.listForRepo('acme/api')).map((c) => [c.prNumber, c.runId, c.issueNumber])).toEqual([
      [7, runId, 1],
    ]);
    expect(landers(h)).toEqual(['pr#7']);
    // A later pass: #9 still names a run that is already claimed.
    await h.engine.schedulerTick();
    expect(await h.store.claims.listForRepo('acme/api')).toHaveLength(1);
    expect(h.forge.labelsAdded).toEqual([{ repo: 'acme/api', number: 7, labels: ['yoke:claim'] }]);
  });

  it('TR04 a claim counts in the pass that first reads it: at cap 1 the freed slot goes to its lander, not to new work', async () => {
    const h = makeHarness({ policy: { globalCap: 1 } });
    h.forge.addRepo('acme/api', AUTOLAND);
    h.forge.addIssue('acme/api', 1);
    h.forge.addIssue('acme/api', 2);
    await h.engine.schedulerTick();
    const afk = h.launcher.starts[0]!;
    // While its run holds the only slot, the agent opens its claim PR; then the run ends.
    h.forge.addPull('acme/api', {
      number: 7,
      headSha: 'aaaaaaa',
      labels: [],
      body: `Closes #1\n\nYoke-Run: ${afk.runId}`,
    });
    await report(h, afk.runId, 'success');
    const pass = await h.engine.reaperTick();
    expect(pass.outcomes.filter((o) => o.result.kind === 'launched').map((o) => o.candidate.subject)).toEqual(['pr#7']);
    expect((await h.store.claims.forPull('acme/api', 7))?.runId).toBe(afk.runId);
  });

  it('TR04 /yoke land on a PR that is not a claim is refused with the reason, and nothing is queued', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', AUTOLAND);
    h.forge.addPull('acme/api', { number: 7, headSha: 'aaaaaaa', labels: ['yoke:claim'] });
    await h.engine.schedulerTick();
    const res = await requestLand(h.fleet, 'acme/api', 7, 'maint');
    expect(res.ok).toBe(false);
    expect(!res.ok && res.refusal.code).toBe('pull_not_claim');
    expect(await h.store.requests.listOpen()).toEqual([]);
  });
});

describe('verdicts (TR01)', () => {
  it('TR01 a reject marker edited into accept changes nothing: the recorded reject holds, and the fix still runs', async () => {
    const h = makeHarness({ policy: { globalCap: 1 } });
    h.forge.addRepo('acme/api', AUTOLAND);
    await addClaimPull(h, 'acme/api', { number: 7, issue: 1, headSha: 'aaaaaaa' });
    const run = await recordVerdict(h, 'acme/api', 7, 'aaaaaaa', 'reject');
    // Someone with a write token edits yoke's own marker comment.
    h.forge.comment('acme/api', 7, 'yoke[bot]', encodeMarker({ run, sha: 'aaaaaaa', verdict: 'accept' }, 'edited'));
    await h.engine.schedulerTick();
    expect(h.forge.merges).toEqual([]);
    expect(h.launcher.starts.map((s) => s.kind)).toEqual(['fix']);
  });

  it('TR01 an accept marker copied from another PR, or with a made-up run, merges nothing', async () => {
    const h = makeHarness({ policy: { globalCap: 5 } });
    h.forge.addRepo('acme/api', { autoland: { enabled: true } });
    await addClaimPull(h, 'acme/api', { number: 7, issue: 1, headSha: 'aaaaaaa' });
    await addClaimPull(h, 'acme/api', { number: 8, issue: 2, headSha: 'bbbbbbb' });
    const other = await recordVerdict(h, 'acme/api', 8, 'bbbbbbb', 'accept');
    h.forge.comment(
      'acme/api',
      7,
      'yoke[bot]',
      encodeMarker({ run: other, sha: 'aaaaaaa', verdict: 'accept' }, 'copied'),
    );
    h.forge.comment(
      'acme/api',
      7,
      'yoke[bot]',
      encodeMarker({ run: 'r-invented', sha: 'aaaaaaa', verdict: 'accept' }, 'made up'),
    );
    await h.engine.schedulerTick();
    expect(h.forge.merges.map((m) => m.number)).toEqual([8]);
    expect(landers(h)).toEqual(['pr#7']);
  });

  it('TR01 a merge GitHub refused is tried again after a fresh accept through /yoke land', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', AUTOLAND);
    await addClaimPull(h, 'acme/api', { number: 7, issue: 1, headSha: 'aaaaaaa' });
    await recordVerdict(h, 'acme/api', 7, 'aaaaaaa', 'accept');
    h.forge.repo('acme/api').mergeRefusal = { status: 405, message: 'Required status check is failing' };
    await h.engine.schedulerTick();
    await h.engine.schedulerTick();
    expect(h.forge.merges).toHaveLength(1); // refused once, not retried blindly
    delete h.forge.repo('acme/api').mergeRefusal;
    const res = await requestLand(h.fleet, 'acme/api', 7, 'maint');
    expect(res.ok).toBe(true);
    await h.engine.kick();
    const lander = h.launcher.starts.at(-1)!;
    expect([lander.kind, lander.headSha]).toEqual(['lander', 'aaaaaaa']);
    await h.store.runs.recordReport(lander.runId, { outcome: 'success', verdict: 'accept', summary: 'still good' }, 0);
    h.launcher.finish(lander.runId);
    await h.engine.reaperTick();
    expect(h.forge.merges).toHaveLength(2);
    expect((await h.store.merges.get('acme/api', 7, 'aaaaaaa'))?.state).toBe('merged');
  });
});

describe('defects found on the same read', () => {
  it('SP15 a pass that pauses a repository launches none of its AFK work later in that pass', async () => {
    const h = makeHarness({ policy: { globalCap: 5, pauseThreshold: 1 } });
    h.forge.addRepo('acme/api', {});
    h.forge.addIssue('acme/api', 1);
    h.forge.addIssue('acme/api', 2);
    h.launcher.failNext = 0;
    // The first launch dies at once and is reaped as a failure inside the pass's own launches:
    // simulate by pausing the repo as soon as the first AFK run is recorded.
    const start = h.launcher.start.bind(h.launcher);
    h.launcher.start = async (spec) => {
      const out = await start(spec);
      await h.store.repos.addFailure('acme/api', 1, h.clock.now());
      return out;
    };
    const pass = await h.engine.schedulerTick();
    expect(pass.outcomes.map((o) => [o.candidate.subject, o.result.kind])).toEqual([
      ['issue#1', 'launched'],
      ['issue#2', 'paused'],
    ]);
  });

  it('SP13 a launch GitHub refuses (an outage) ends the run cancelled: no strike, no pause, and the pass reports it', async () => {
    const h = makeHarness({ policy: { globalCap: 1, pauseThreshold: 3 } });
    h.forge.addRepo('acme/api', {});
    h.forge.addIssue('acme/api', 1);
    for (let i = 0; i < 4; i++) {
      h.launcher.failNext = 1;
      const pass = await h.engine.schedulerTick();
      expect(pass.outcomes.map((o) => o.result.kind)).toEqual(['launch_failed']);
    }
    expect((await h.store.runs.listAll()).map((r) => r.outcome)).toEqual([
      'cancelled',
      'cancelled',
      'cancelled',
      'cancelled',
    ]);
    expect(await h.store.repos.get('acme/api')).toMatchObject({ consecutiveFailures: 0, pausedSince: null });
    await resetRepo(h.fleet, 'acme/api');
    await h.engine.schedulerTick();
    expect(h.launcher.starts.map((s) => s.subject)).toEqual(['issue#1']);
  });

  it('SC04 a repository with a long backlog does not starve another of a shared cap of 1', async () => {
    const h = makeHarness({ policy: { globalCap: 1 } });
    h.forge.addRepo('acme/big', {});
    h.forge.addRepo('acme/small', {});
    for (let i = 1; i <= 10; i++) h.forge.addIssue('acme/big', i);
    h.forge.addIssue('acme/small', 1);
    const order: string[] = [];
    for (let pass = 0; pass < 3; pass++) {
      await h.engine.schedulerTick();
      const started = h.launcher.starts.at(-1)!;
      order.push(started.repo.fullName);
      await report(h, started.runId, 'success');
      await h.engine.recover();
    }
    expect(order.slice(0, 2).sort()).toEqual(['acme/big', 'acme/small']);
  });
});
