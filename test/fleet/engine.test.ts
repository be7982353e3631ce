import { describe, expect, it } from 'vitest';
import { requestStart, resetRepo } from '../../src/fleet/runs/controls.js';
import { AUTOLAND, addClaimPull, makeHarness, recordVerdict, report, until, type Harness } from '../helpers/fleet.js';
import { catalogue } from '../helpers/catalogue.js';

const launchedKinds = (h: Harness) => h.launcher.starts.map((s) => `${s.kind}:${s.subject}`);

describe('the spawn engine', () => {
  it('SP01 launches only from SpawnOnce: a manual start is a request the next pass launches', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', { auto: false });
    h.forge.addIssue('acme/api', 5);
    await h.engine.schedulerTick();
    expect(h.launcher.starts).toHaveLength(0);
    const res = await requestStart(h.fleet, 'acme/api', 5, { by: 'maint' });
    expect(res.ok).toBe(true);
    expect(h.launcher.starts).toHaveLength(0); // nothing launched outside the pass
    await h.engine.kick();
    expect(launchedKinds(h)).toEqual(['afk_manual:issue#5']);
  });

  it('SP02 one pass lists repos once and authenticates each installation once, skipping one whose auth fails', async () => {
    const h = makeHarness({ policy: { globalCap: 10 } });
    for (let i = 0; i < 5; i++) h.forge.addRepo(`one/r${i}`, {}, 1);
    for (let i = 0; i < 3; i++) h.forge.addRepo(`two/r${i}`, {}, 2);
    h.forge.addRepo('three/r', {}, 3);
    h.forge.addIssue('two/r0', 1);
    h.forge.addIssue('three/r', 1);
    h.forge.failingAuth.add(3);
    const pass = await h.engine.schedulerTick();
    expect(h.forge.calls.listInstallations).toBe(1);
    expect(h.forge.calls.auth).toBe(3);
    expect(h.forge.calls.listRepos).toBe(2);
    expect(pass.authFailures).toEqual([{ installationId: 3, detail: 'Bad credentials' }]);
    expect(launchedKinds(h)).toEqual(['afk_auto:issue#1']);
    expect(h.launcher.starts[0]!.repo.fullName).toBe('two/r0');
  });

  it('SP08 concurrent ticks and kicks queue on one lock and never exceed the cap', async () => {
    const h = makeHarness({ policy: { globalCap: 3 } });
    for (const r of ['a/a', 'b/b', 'c/c']) {
      h.forge.addRepo(r, {});
      for (let i = 1; i <= 4; i++) h.forge.addIssue(r, i);
    }
    let release!: () => void;
    h.launcher.gate = new Promise((r) => (release = r));
    const passes = [
      h.engine.schedulerTick(),
      h.engine.reaperTick(),
      h.engine.kick(),
      h.engine.schedulerTick(),
      h.engine.kick(),
    ];
    // The first pass is held inside its first launch: no other pass may have started reading.
    await until(() => h.launcher.waiting > 0);
    await new Promise((r) => setTimeout(r, 20));
    expect(h.forge.calls.listInstallations).toBe(1);
    release();
    await Promise.all(passes);
    expect(await h.store.runs.countLive()).toBe(3);
    expect(Math.max(...h.launcher.table.log.map((e) => e.concurrent))).toBe(3);
    // Serialized: the later passes each saw the cap already reached and launched nothing.
    expect(h.launcher.starts).toHaveLength(3);
  });

  it('SP08 SC07 ticks that fire while a pass runs wait as one pass per trigger, not a growing backlog', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', {});
    h.forge.addIssue('acme/api', 1);
    let release!: () => void;
    h.launcher.gate = new Promise((r) => (release = r));
    const first = h.engine.schedulerTick();
    await until(() => h.launcher.waiting > 0); // the first pass is now inside the lock, held at its launch
    const piled = Array.from({ length: 10 }, () => h.engine.schedulerTick());
    const kicks = Array.from({ length: 10 }, () => h.engine.kick());
    release();
    await Promise.all([first, ...piled, ...kicks]);
    expect(new Set(piled).size).toBe(1);
    expect(new Set(kicks).size).toBe(1);
    expect(h.forge.calls.listInstallations).toBe(3);
  });

  it('SP09 the predicates carry no cap term: at cap the work is still wanted, only the pass holds it back', async () => {
    const h = makeHarness({ policy: { globalCap: 1 } });
    h.forge.addRepo('acme/api', {});
    h.forge.addIssue('acme/api', 1);
    h.forge.addIssue('acme/api', 2);
    await h.engine.schedulerTick();
    expect(await h.store.runs.countLive()).toBe(1);
    // Produced with the cap lifted, the same state yields issue 2 as a candidate.
    const { decideNewWork } = await import('../../src/fleet/spawn/producers.js');
    const snap = await h.forge.readRepo(h.forge.repo('acme/api').ref);
    const facts = {
      repo: snap.repo,
      state: (await h.store.repos.get('acme/api'))!,
      config: (snap.config as unknown as { config: never }).config,
      view: snap,
      runs: await h.store.runs.listForRepo('acme/api'),
      claims: new Map(),
      requests: [],
      startableIssues: new Map<number, string>(),
      trustedLogins: new Set(['yoke[bot]']),
      liveSubjects: new Set((await h.store.runs.listLive()).map((r) => `${r.repo}:${r.subject}`)),
      spentToday: { repo: 0, fleet: 0 },
      fleetDailyUsd: null,
      pauseThreshold: 3,
    };
    const decided = decideNewWork(facts);
    expect(decided.candidates.map((c) => c.subject)).toEqual(['issue#2']);
    // Issue 1's own AFK run is live: that is its work, running, not work that waits.
    expect(decided.waiting).toEqual([]);
  });

  it('SP10 candidates are re-derived from the forge and the store: a new engine on the same store decides the same', async () => {
    const h = makeHarness({ policy: { globalCap: 1 } });
    h.forge.addRepo('acme/api', AUTOLAND);
    h.forge.addIssue('acme/api', 1);
    h.forge.addIssue('acme/api', 2);
    await addClaimPull(h, 'acme/api', { number: 10, issue: 3, headSha: 'aaaaaaa' });
    const first = await h.engine.schedulerTick();
    const again = makeHarness({
      store: h.store,
      forge: h.forge,
      launcher: h.launcher,
      clock: h.clock,
      policy: { globalCap: 1 },
    });
    const second = await again.engine.schedulerTick();
    const subjects = (p: typeof first) => p.candidates.map((c) => `${c.stage}:${c.subject}`);
    expect(subjects(first)).toEqual(['lander:pr#10', 'new_work:issue#1', 'new_work:issue#2']);
    // The lander launched in the first pass; the rest are derived again, identically.
    expect(subjects(second)).toEqual([]); // at cap: producers skip the repo
    h.launcher.finish(h.launcher.starts[0]!.runId);
    await again.engine.reaperTick();
    expect(subjects(again.engine.lastPass!)).toEqual(['lander:pr#10', 'new_work:issue#1', 'new_work:issue#2']);
  });

  it('SP11 every cadence gathers from every producer; the reaper tick fills the slot it just freed', async () => {
    const h = makeHarness({ policy: { globalCap: 1 } });
    h.forge.addRepo('acme/api', AUTOLAND);
    h.forge.addIssue('acme/api', 1);
    await h.engine.kick();
    expect(launchedKinds(h)).toEqual(['afk_auto:issue#1']);
    const runId = h.launcher.starts[0]!.runId;
    h.forge.addPull('acme/api', { number: 7, headSha: 'bbbbbbb', body: `Closes #1\n\nYoke-Run: ${runId}` });
    await report(h, runId, 'success');
    const pass = await h.engine.reaperTick();
    expect(pass.reaped.map((r) => r.run.id)).toEqual([runId]);
    expect(launchedKinds(h)).toEqual(['afk_auto:issue#1', 'lander:pr#7']);
    expect(pass.trigger).toBe('reaper');
  });

  it('SP12 a producer skips a repo at its cap in the snapshot and pays no forge read for it', async () => {
    const h = makeHarness({ policy: { globalCap: 1, repoCaps: { 'wide/repo': 3 } } });
    h.forge.addRepo('narrow/repo', AUTOLAND);
    h.forge.addRepo('wide/repo', {});
    h.forge.addIssue('narrow/repo', 1);
    await h.engine.schedulerTick();
    expect(await h.store.runs.countLive()).toBe(1);
    h.forge.readsByRepo.clear();
    h.forge.calls.readConfig = 0;
    await h.engine.schedulerTick();
    expect(h.forge.readsByRepo.get('narrow/repo')).toBeUndefined();
    expect(h.forge.readsByRepo.get('wide/repo')).toBe(1);
  });

  it('SP12 an autoland-less repo pays no read for landers or fixes', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', { auto: false });
    let reads = 0;
    const orig = h.forge.readRepo.bind(h.forge);
    h.forge.readRepo = async (r) => {
      reads++;
      return orig(r);
    };
    const { landerCandidates, fixCandidates } = await import('../../src/fleet/spawn/producers.js');
    const ctx = {
      repos: [h.forge.repo('acme/api').ref],
      snapshot: { liveCount: 0, liveSubjects: new Set<string>() },
      policy: { globalCap: 2, repoCaps: {}, landerAttemptsPerHead: 2 },
      facts: async () => {
        reads++;
        return null;
      },
      wantsLanders: async () => false,
      wantsFixes: async () => false,
    };
    expect(await landerCandidates(ctx)).toEqual({ candidates: [], waiting: [] });
    expect(await fixCandidates(ctx)).toEqual({ candidates: [], waiting: [] });
    expect(reads).toBe(0);
  });

  it('SP17 a run past its budget deadline is cancelled and reaped as timed out, whatever its kind', async () => {
    const h = makeHarness({ policy: { globalCap: 3 } });
    h.forge.addRepo('acme/api', { ...AUTOLAND, budget_minutes: { afk: 30, lander: 10, fix: 20 } });
    h.forge.addIssue('acme/api', 1);
    await addClaimPull(h, 'acme/api', { number: 9, issue: 4, headSha: 'ccccccc' });
    await h.engine.schedulerTick();
    const runs = await h.store.runs.listLive();
    expect(runs.map((r) => [r.kind, (r.budgetDeadline - r.launchedAt) / 60_000])).toEqual([
      ['lander', 10],
      ['afk_auto', 30],
    ]);
    h.clock.advance(10 * 60_000);
    const pass = await h.engine.reaperTick();
    expect(pass.reaped.map((r) => [r.run.kind, r.outcome])).toEqual([['lander', 'timeout']]);
    expect(h.launcher.table.ended.has(runs[0]!.id)).toBe(true); // cancelled at the deadline
    h.clock.advance(20 * 60_000);
    const later = await h.engine.reaperTick();
    expect(later.reaped.map((r) => [r.run.kind, r.outcome])).toContainEqual(['afk_auto', 'timeout']);
  });

  it('SP18 autoland is off by default: a claim PR gets no lander and an accept is never merged', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', {});
    await addClaimPull(h, 'acme/api', { number: 3, issue: 2, headSha: 'ddddddd' });
    await recordVerdict(h, 'acme/api', 3, 'ddddddd', 'accept');
    await h.engine.schedulerTick();
    expect(h.launcher.starts).toHaveLength(0);
    expect(h.forge.merges).toHaveLength(0);
  });

  it('SP18 with autoland on, a lander verdict becomes a marker comment and an accept at the head merges with that sha', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', AUTOLAND);
    await addClaimPull(h, 'acme/api', { number: 3, issue: 2, headSha: 'ddddddd' });
    await h.engine.schedulerTick();
    const lander = h.launcher.starts[0]!;
    expect([lander.kind, lander.headSha]).toEqual(['lander', 'ddddddd']);
    await h.store.runs.recordReport(lander.runId, { outcome: 'success', verdict: 'accept', summary: 'tests pass' }, 0);
    h.fleet.postVerdicts();
    await h.engine.lock.run(async () => {});
    expect(h.forge.comments.at(-1)!.body).toContain(
      '<!-- yoke:verdict v1 {"run":"' + lander.runId + '","sha":"ddddddd","verdict":"accept"} -->',
    );
    h.launcher.finish(lander.runId);
    await h.engine.reaperTick();
    expect(h.forge.merges).toEqual([{ repo: 'acme/api', number: 3, sha: 'ddddddd', method: 'squash' }]);
  });

  it('SP18 a reviewer\'s "changes requested" holds the merge of an accepted head until that reviewer approves', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', AUTOLAND);
    h.forge.repo('acme/api').permissions.maint = 'write';
    const { pull: pr } = await addClaimPull(h, 'acme/api', { number: 3, issue: 2, headSha: 'ddddddd' });
    await recordVerdict(h, 'acme/api', 3, 'ddddddd', 'accept');
    pr.reviews.push(
      { author: 'maint', state: 'CHANGES_REQUESTED', commitId: 'ddddddd' },
      { author: 'agent', state: 'APPROVED', commitId: 'ddddddd' },
    );
    await h.engine.schedulerTick();
    expect(h.forge.merges).toEqual([]);
    pr.reviews.push({ author: 'maint', state: 'APPROVED', commitId: 'ddddddd' });
    await h.engine.schedulerTick();
    expect(h.forge.merges.map((m) => m.sha)).toEqual(['ddddddd']);
  });

  it('TR33 a change request from someone who cannot write holds nothing, as on GitHub; one whose permission GitHub will not tell holds', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', AUTOLAND);
    h.forge.repo('acme/api').permissions.passerby = 'read';
    const { pull: pr } = await addClaimPull(h, 'acme/api', { number: 3, issue: 2, headSha: 'ddddddd' });
    await recordVerdict(h, 'acme/api', 3, 'ddddddd', 'accept');
    pr.reviews.push({ author: 'passerby', state: 'CHANGES_REQUESTED', commitId: 'ddddddd' });
    // GitHub would not say what maint may do this pass: the change request stands.
    pr.reviews.push({ author: 'maint', state: 'CHANGES_REQUESTED', commitId: 'ddddddd' });
    const ask = h.forge.getPermission.bind(h.forge);
    h.forge.getPermission = async (repo, login) => {
      if (login === 'maint') throw new Error('GitHub answered 502');
      return ask(repo, login);
    };
    await h.engine.schedulerTick();
    expect(h.forge.merges).toEqual([]);
    // Told: maint can read only. Neither change request is a writer's now, and the accepted head merges.
    h.forge.getPermission = ask;
    h.forge.repo('acme/api').permissions.maint = 'read';
    await h.engine.schedulerTick();
    expect(h.forge.merges.map((m) => m.sha)).toEqual(['ddddddd']);
  });

  it('SP19 a reject at the head gives a fix run at StageFix; its new head needs a new lander', async () => {
    const h = makeHarness({ policy: { globalCap: 1 } });
    h.forge.addRepo('acme/api', AUTOLAND);
    const { pull: pr } = await addClaimPull(h, 'acme/api', { number: 4, issue: 2, headSha: 'eeeeeee' });
    await recordVerdict(h, 'acme/api', 4, 'eeeeeee', 'reject');
    h.forge.addIssue('acme/api', 1);
    const pass = await h.engine.schedulerTick();
    expect(pass.candidates.map((c) => `${c.stage}:${c.subject}`)).toEqual(['fix:pr#4', 'new_work:issue#1']);
    expect(launchedKinds(h)).toEqual(['fix:pr#4']);
    // The fix pushes a repair and ends.
    pr.headSha = 'fffffff';
    await report(h, h.launcher.starts[0]!.runId, 'success');
    await h.engine.reaperTick();
    expect(launchedKinds(h)).toEqual(['fix:pr#4', 'lander:pr#4']);
    expect(h.launcher.starts[1]!.headSha).toBe('fffffff');
  });

  it('SP19 when fix attempts run out the PR is labelled and the maintainers told once', async () => {
    const h = makeHarness({ policy: { globalCap: 1 } });
    h.forge.addRepo('acme/api', { autoland: { enabled: true }, fix_forward: { enabled: true, max_attempts: 1 } });
    await addClaimPull(h, 'acme/api', { number: 4, issue: 2, headSha: 'eeeeeee' });
    await recordVerdict(h, 'acme/api', 4, 'eeeeeee', 'reject');
    await h.engine.schedulerTick();
    // The last attempt is still running: it has not used the attempt up, and the PR is not stuck yet.
    await h.engine.schedulerTick();
    expect(h.forge.labelsAdded.filter((l) => l.labels.includes('yoke:stuck'))).toEqual([]);
    await report(h, h.launcher.starts[0]!.runId, 'failure'); // the fix did not push anything
    await h.engine.reaperTick();
    await h.engine.schedulerTick();
    expect(launchedKinds(h)).toEqual(['fix:pr#4']);
    expect(h.forge.labelsAdded.filter((l) => l.labels.includes('yoke:stuck'))).toEqual([
      { repo: 'acme/api', number: 4, labels: ['yoke:stuck'] },
    ]);
    const notices = h.forge.comments.filter((c) => c.body.includes('fix runs'));
    expect(notices).toHaveLength(1);
    expect(notices[0]!.body).toContain('comment `/yoke land` on #4');
  });
});

describe('three strikes', () => {
  async function failAfk(h: Harness, outcome: 'failure' | 'timeout') {
    await h.engine.kick();
    const run = (await h.store.runs.listLive()).find((r) => r.kind === 'afk_auto')!;
    if (outcome === 'failure') await report(h, run.id, 'failure');
    else h.clock.advance(61 * 60_000);
    await h.engine.reaperTick();
  }

  it('SP13 AFK failures and timeouts add a strike, an AFK success resets the count', async () => {
    const h = makeHarness({ policy: { globalCap: 1 } });
    h.forge.addRepo('acme/api', {});
    h.forge.addIssue('acme/api', 1);
    await failAfk(h, 'failure');
    expect((await h.store.repos.get('acme/api'))!.consecutiveFailures).toBe(1);
    await failAfk(h, 'timeout');
    expect((await h.store.repos.get('acme/api'))!.consecutiveFailures).toBe(2);
    const run = (await h.store.runs.listLive())[0] ?? (await h.engine.kick(), (await h.store.runs.listLive())[0]!);
    await report(h, run.id, 'success');
    await h.engine.reaperTick();
    expect((await h.store.repos.get('acme/api'))!.consecutiveFailures).toBe(0);
  });

  it('SP14 lander and fix outcomes never move the counter; a lander that posts reject resets nothing', async () => {
    const h = makeHarness({ policy: { globalCap: 2 } });
    h.forge.addRepo('acme/api', AUTOLAND);
    h.forge.addIssue('acme/api', 1);
    await failAfk(h, 'failure');
    await failAfk(h, 'failure');
    expect((await h.store.repos.get('acme/api'))!.consecutiveFailures).toBe(2);
    await addClaimPull(h, 'acme/api', { number: 8, issue: 9, headSha: '1111111' });
    await h.engine.kick();
    const lander = (await h.store.runs.listLive()).find((r) => r.kind === 'lander')!;
    await report(h, lander.id, 'success', 'reject');
    h.fleet.postVerdicts();
    await h.engine.lock.run(async () => {});
    await h.engine.reaperTick();
    expect((await h.store.runs.get(lander.id))!.outcome).toBe('success');
    expect((await h.store.repos.get('acme/api'))!.consecutiveFailures).toBe(2);
    const fix = (await h.store.runs.listLive()).find((r) => r.kind === 'fix')!;
    h.clock.advance(46 * 60_000); // the fix times out; the AFK run is still within its hour
    await h.engine.reaperTick();
    expect((await h.store.runs.get(fix.id))!.outcome).toBe('timeout');
    expect((await h.store.repos.get('acme/api'))!.consecutiveFailures).toBe(2);
  });

  it('SP15 at the threshold the auto loop pauses, manual starts answer 409, nothing un-pauses but a reset', async () => {
    const h = makeHarness({ policy: { globalCap: 1 } });
    h.forge.addRepo('acme/api', {});
    h.forge.addIssue('acme/api', 1);
    h.forge.addIssue('acme/api', 2);
    for (let i = 0; i < 3; i++) await failAfk(h, 'failure');
    const state = (await h.store.repos.get('acme/api'))!;
    expect(state.pausedSince).not.toBeNull();
    expect(h.forge.comments.at(-1)!.body).toContain('`/yoke reset`');
    const starts = h.launcher.starts.length;
    await h.engine.schedulerTick();
    h.clock.advance(24 * 3600_000);
    await h.engine.reaperTick();
    expect(h.launcher.starts.length).toBe(starts);
    const refused = await requestStart(h.fleet, 'acme/api', 2, { by: 'maint' });
    expect(refused.ok).toBe(false);
    if (!refused.ok) {
      expect(refused.refusal.status).toBe(409);
      expect(refused.refusal.code).toBe('repo_paused');
      expect(refused.refusal.recovery).toContain('/yoke reset');
    }
    const reset = await resetRepo(h.fleet, 'acme/api');
    expect(reset.ok).toBe(true);
    await h.engine.kick();
    expect(h.launcher.starts.length).toBe(starts + 1);
    expect((await h.store.repos.get('acme/api'))!.pausedSince).toBeNull();
  });

  it('SP16 landers have no counter of their own: repeated lander deaths pause nothing', async () => {
    const h = makeHarness({ policy: { globalCap: 1, landerAttemptsPerHead: 5 } });
    h.forge.addRepo('acme/api', AUTOLAND);
    await addClaimPull(h, 'acme/api', { number: 8, issue: 2, headSha: '2222222' });
    for (let i = 0; i < 4; i++) {
      await h.engine.kick();
      const lander = (await h.store.runs.listLive())[0]!;
      expect(lander.kind).toBe('lander');
      await report(h, lander.id, 'failure');
      await h.engine.reaperTick();
    }
    const state = (await h.store.repos.get('acme/api'))!;
    expect([state.consecutiveFailures, state.pausedSince]).toEqual([0, null]);
    const cols = (await catalogue(h.store.sql)).get('repos')!.map((c) => c.name);
    expect(cols.filter((c) => c.includes('lander'))).toEqual([]);
  });
});

describe('producers, ticks and bad input', () => {
  it('SP03 producers gather candidates and never launch: nothing is recorded or started until spawnPass', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', AUTOLAND);
    h.forge.addIssue('acme/api', 1);
    h.forge.addRepo('acme/unseen', {});
    h.forge.addIssue('acme/unseen', 1);
    await addClaimPull(h, 'acme/api', { number: 5, issue: 5, headSha: '3333333' });
    await addClaimPull(h, 'acme/api', { number: 6, issue: 6, headSha: '4444444' });
    await recordVerdict(h, 'acme/api', 6, '4444444', 'reject');
    const runsBefore = await h.store.runs.listAll();
    const preview = await h.engine.previewCandidates();
    expect(preview.map((c) => `${c.repo} ${c.stage}:${c.subject}`)).toEqual([
      'acme/api lander:pr#5',
      'acme/api fix:pr#6',
      'acme/api new_work:issue#1',
      'acme/unseen new_work:issue#1',
    ]);
    expect(h.launcher.starts).toEqual([]);
    expect(await h.store.runs.listAll()).toEqual(runsBefore);
    // Previewing reads only: no claim recorded, not even an unseen repository's first row written.
    expect(await h.store.claims.listForRepo('acme/api')).toEqual([]);
    expect(await h.store.repos.get('acme/unseen')).toBeUndefined();
  });

  it('SP11 the scheduler ticks every 60 s and the reaper every 30 s, on injected timers', async () => {
    const intervals: { fn: () => void; ms: number }[] = [];
    const h = makeHarness({
      timers: { setInterval: (fn: () => void, ms: number) => intervals.push({ fn, ms }), clearInterval: () => {} },
    });
    h.forge.addRepo('acme/api', {});
    h.forge.addIssue('acme/api', 1);
    h.engine.start();
    expect(intervals.map((i) => i.ms)).toEqual([60_000, 30_000]);
    // Fire as a fake clock would across 60 s: reaper at 30 s and 60 s, scheduler at 60 s.
    const fire = (ms: number) => intervals.filter((i) => ms % i.ms === 0).forEach((i) => i.fn());
    fire(30_000);
    await h.engine.lock.run(async () => {});
    expect(h.engine.lastPass?.trigger).toBe('reaper');
    expect(h.launcher.starts).toHaveLength(1);
    fire(60_000);
    await h.engine.lock.run(async () => {});
    expect(h.engine.lastPass?.trigger).toBe('reaper');
    h.engine.stop();
  });

  it('SP13 a run that ends without reporting a result is a failure, and an AFK one a strike', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', {});
    h.forge.addIssue('acme/api', 1);
    await h.engine.schedulerTick();
    const run = (await h.store.runs.listLive())[0]!;
    h.launcher.finish(run.id); // exits without POSTing a result
    await h.engine.recover();
    expect(await h.store.runs.get(run.id)).toMatchObject({
      status: 'ended',
      outcome: 'failure',
      outcomeReason: 'ended without reporting a result (exit code 0)',
    });
    expect((await h.store.repos.get('acme/api'))!.consecutiveFailures).toBe(1);
  });

  it('GH01 a bad opt-in file, a failing repo read and a marker with bad JSON stop nothing else in the pass', async () => {
    const h = makeHarness({ policy: { globalCap: 5 } });
    h.forge.addRepo('acme/broken-config', { autoland: 'yes' });
    h.forge.addIssue('acme/broken-config', 1);
    h.forge.addRepo('acme/unreachable', {});
    h.forge.addRepo('acme/bad-marker', AUTOLAND);
    await addClaimPull(h, 'acme/bad-marker', { number: 2, issue: 2, headSha: '5555555' });
    h.forge.comment('acme/bad-marker', 2, 'yoke[bot]', '<!-- yoke:verdict v1 {"run": oops} -->');
    h.forge.addRepo('acme/healthy', {});
    h.forge.addIssue('acme/healthy', 9);
    const read = h.forge.readRepo.bind(h.forge);
    h.forge.readRepo = async (r) => {
      if (r.fullName === 'acme/unreachable') throw new Error('HttpError: Server Error');
      return read(r);
    };
    await h.engine.schedulerTick();
    expect(launchedKinds(h).sort()).toEqual(['afk_auto:issue#9', 'lander:pr#2']);
    expect((await h.store.repos.get('acme/broken-config'))!.disabledReason).toBe(
      '.github/yoke.yml is not valid: autoland: Invalid input: expected object, received string',
    );
    expect((await h.store.repos.get('acme/healthy'))!.disabledReason).toBeNull();
    // Its work waits, one line for all of it, with the code of its own: not silence, and not "paused".
    expect(
      h.engine
        .lastPass!.waiting.filter((w) => w.repo === 'acme/broken-config')
        .map((w) => [w.subject, w.reason.code, w.reason.recovery]),
    ).toEqual([
      [
        null,
        'repo_disabled',
        'Fix `.github/yoke.yml` on the default branch of acme/broken-config; yoke re-reads it on its next pass.',
      ],
    ]);
  });
});
