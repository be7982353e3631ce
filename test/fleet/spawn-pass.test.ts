import { describe, expect, it } from 'vitest';
import { spawnPass, orderCandidates, type LaunchAttempt } from '../../src/fleet/spawn/spawn-pass.js';
import type { Candidate, SpawnStage } from '../../src/fleet/candidate.js';
import { effectiveCap } from '../../src/fleet/cap.js';
import { recordLaunch } from '../../src/fleet/runs/launch.js';
import { openStore } from '../../src/store/store.js';

const cand = (stage: SpawnStage, repo: string, n: number): Candidate => ({
  stage,
  repo,
  installationId: 1,
  kind: stage === 'lander' ? 'lander' : stage === 'fix' ? 'fix' : 'afk_auto',
  subject: `${stage === 'new_work' ? 'issue' : 'pr'}#${n}`,
  issueNumber: n,
  prNumber: stage === 'new_work' ? null : n,
  headSha: null,
  budgetMinutes: 10,
  requestId: null,
  why: 'test',
});

describe('spawnPass', () => {
  it('SP04 stable-sorts by stage rank only: landers, then fixes, then new work, each in arrival order', () => {
    const input = [
      cand('new_work', 'a/a', 1),
      cand('fix', 'a/a', 2),
      cand('lander', 'b/b', 3),
      cand('new_work', 'b/b', 4),
      cand('lander', 'a/a', 5),
      cand('fix', 'b/b', 6),
    ];
    const order = orderCandidates(input).map((c) => `${c.stage}:${c.issueNumber}`);
    expect(order).toEqual(['lander:3', 'lander:5', 'fix:2', 'fix:6', 'new_work:1', 'new_work:4']);
  });

  it('SP05 launches only while the fleet-wide live count is under the repo effective cap (override, else global)', async () => {
    const policy = { globalCap: 2, repoCaps: { 'big/repo': 4 }, pauseThreshold: 3 };
    expect(effectiveCap(policy, 'big/repo')).toBe(4);
    expect(effectiveCap(policy, 'Big/Repo')).toBe(4);
    expect(effectiveCap(policy, 'small/repo')).toBe(2);
    const launched: string[] = [];
    const out = await spawnPass(
      [
        cand('new_work', 'small/repo', 1),
        cand('new_work', 'small/repo', 2),
        cand('new_work', 'small/repo', 3),
        cand('new_work', 'big/repo', 4),
        cand('new_work', 'big/repo', 5),
        cand('new_work', 'big/repo', 6),
      ],
      { liveCount: 1, liveSubjects: new Set() },
      policy,
      async (c) => {
        launched.push(`${c.repo}#${c.issueNumber}`);
        return { kind: 'launched', runId: `r${c.issueNumber}` };
      },
    );
    // 1 live + small#1 = 2 = small's cap; big may go on to 4 fleet-wide.
    expect(launched).toEqual(['small/repo#1', 'big/repo#4', 'big/repo#5']);
    expect(out.outcomes.filter((o) => o.result.kind === 'shed').map((o) => o.candidate.issueNumber)).toEqual([2, 3, 6]);
  });

  it('SP06 the snapshot only sheds load: the locked launch re-counts from the store and its ErrOverCap refusal wins over a stale snapshot', async () => {
    const store = openStore(':memory:');
    let n = 0;
    const deps = {
      store,
      launcher: { name: 'command', usesSecret: () => false } as never,
      clock: { now: () => Date.UTC(2026, 10, 30) },
      newRunId: () => `run${++n}`,
    };
    // Another process fills the fleet to the cap after this pass took its snapshot of 0 live runs.
    for (const subject of ['issue#90', 'issue#91']) {
      const rec = await recordLaunch(deps, { ...cand('new_work', 'b/b', 0), subject }, 2);
      expect(rec.kind).toBe('recorded');
    }
    const out = await spawnPass(
      [cand('lander', 'a/a', 1), cand('fix', 'a/a', 2)],
      { liveCount: 0, liveSubjects: new Set() },
      { globalCap: 2, repoCaps: {}, pauseThreshold: 3 },
      async (c, cap) => {
        const rec = await recordLaunch(deps, c, cap);
        return rec.kind === 'recorded' ? { kind: 'launched', runId: rec.runId } : rec;
      },
    );
    expect(out.outcomes.map((o) => o.result)).toEqual([
      { kind: 'over_cap', freshCount: 2 },
      { kind: 'shed', liveCount: 2, cap: 2 },
    ]);
    expect(await store.runs.countLive()).toBe(2);
    expect((await store.runs.listAll()).map((r) => r.subject).sort()).toEqual(['issue#90', 'issue#91']);
  });

  it('SP07 raises the snapshot to the repo cap on ErrOverCap and skips only that candidate', async () => {
    const policy = { globalCap: 2, repoCaps: { 'wide/repo': 5 }, pauseThreshold: 3 };
    const snapshot = { liveCount: 0, liveSubjects: new Set<string>() };
    const calls: string[] = [];
    const launch = async (c: Candidate): Promise<LaunchAttempt> => {
      calls.push(`${c.repo}#${c.issueNumber}`);
      // Another process filled the fleet to 2 behind this snapshot's back.
      return c.repo === 'narrow/repo' ? { kind: 'over_cap', freshCount: 2 } : { kind: 'launched', runId: 'x' };
    };
    const out = await spawnPass(
      [
        cand('lander', 'narrow/repo', 1),
        cand('lander', 'narrow/repo', 2),
        cand('fix', 'wide/repo', 3),
        cand('new_work', 'narrow/repo', 4),
      ],
      snapshot,
      policy,
      launch,
    );
    // narrow#2 and narrow#4 are shed by the raised snapshot without another locked launch; wide (cap 5) still launches.
    expect(calls).toEqual(['narrow/repo#1', 'wide/repo#3']);
    expect(out.outcomes.map((o) => o.result.kind)).toEqual(['over_cap', 'shed', 'launched', 'shed']);
    expect(out.after.liveCount).toBe(3);
    expect(snapshot.liveCount).toBe(0); // the pass's input snapshot is not changed behind its readers' backs
  });

  it('SP07 with one shared cap an ErrOverCap stops the whole pass', async () => {
    const calls: number[] = [];
    const out = await spawnPass(
      [cand('lander', 'a/a', 1), cand('fix', 'b/b', 2), cand('new_work', 'c/c', 3)],
      { liveCount: 0, liveSubjects: new Set() },
      { globalCap: 2, repoCaps: {}, pauseThreshold: 3 },
      async (c) => {
        calls.push(c.issueNumber!);
        return { kind: 'over_cap', freshCount: 2 };
      },
    );
    expect(calls).toEqual([1]);
    expect(out.outcomes.slice(1).every((o) => o.result.kind === 'shed')).toBe(true);
  });

  it('SP04 skips a candidate whose subject already has a live run without calling the launcher', async () => {
    const calls: number[] = [];
    const out = await spawnPass(
      [cand('lander', 'a/a', 7), cand('fix', 'a/a', 7)],
      { liveCount: 0, liveSubjects: new Set() },
      { globalCap: 5, repoCaps: {}, pauseThreshold: 3 },
      async (c) => {
        calls.push(c.issueNumber!);
        return { kind: 'launched', runId: 'x' };
      },
    );
    expect(calls).toEqual([7]);
    expect(out.outcomes[1]!.result.kind).toBe('in_flight');
  });

  it('SC04 within a stage repositories take turns from a rotating start; stage stays the only sort key', () => {
    const input = [
      cand('new_work', 'big/one', 1),
      cand('new_work', 'big/one', 2),
      cand('new_work', 'big/one', 3),
      cand('lander', 'c/c', 9),
      cand('new_work', 'b/b', 4),
      cand('new_work', 'c/c', 5),
    ];
    const order = (rotation: number) =>
      orderCandidates(input, rotation).map((c) => `${c.stage}:${c.repo}#${c.issueNumber}`);
    expect(order(0)).toEqual([
      'lander:c/c#9',
      'new_work:big/one#1',
      'new_work:b/b#4',
      'new_work:c/c#5',
      'new_work:big/one#2',
      'new_work:big/one#3',
    ]);
    expect(order(1)).toEqual([
      'lander:c/c#9',
      'new_work:b/b#4',
      'new_work:c/c#5',
      'new_work:big/one#1',
      'new_work:big/one#2',
      'new_work:big/one#3',
    ]);
    expect(order(5)).toEqual(order(2));
  });

  it('SC04 twenty repositories with equal backlogs share a cap of 4 evenly over 100 passes', async () => {
    const launches = new Map<string, number>();
    for (let pass = 0; pass < 100; pass++) {
      const candidates = Array.from({ length: 20 }, (_, r) =>
        Array.from({ length: 5 }, (_, i) => cand('new_work', `fleet/r${r}`, i)),
      ).flat();
      await spawnPass(
        candidates,
        { liveCount: 0, liveSubjects: new Set() },
        { globalCap: 4, repoCaps: {}, pauseThreshold: 3 },
        async (c) => {
          launches.set(c.repo, (launches.get(c.repo) ?? 0) + 1);
          return { kind: 'launched', runId: 'x' };
        },
        pass,
      );
    }
    const counts = [...launches.values()];
    expect(launches.size).toBe(20);
    expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
  });
});
