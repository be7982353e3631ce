import { describe, expect, it } from 'vitest';
import { reapRuns } from '../../src/fleet/reaper.js';
import type { Liveness } from '../../src/launcher/launcher.js';
import type { Run } from '../../src/store/runs.js';
import { FakeLauncher, makeHarness } from '../helpers/fleet.js';

// The reaper ends a run only from the run as it is when it ends it: a report
// that lands while the tick is busy reading (another run's liveness, say) is
// never lost, and a recorded result always wins over "ended without reporting".

/** A launcher whose liveness read of one run is slow until released. */
class SlowLauncher extends FakeLauncher {
  held = new Map<string, Promise<void>>();
  override async liveness(run: Run): Promise<Liveness> {
    const hold = this.held.get(run.id);
    if (hold) await hold;
    return super.liveness(run);
  }
}

describe('the reaper', () => {
  it("SP13 a run that reported while the tick read another run's liveness ends with its report: no failure, no strike", async () => {
    const launcher = new SlowLauncher();
    const h = makeHarness({ launcher });
    await h.store.repos.ensure('acme/api', 1, h.clock.now());
    const insert = async (id: string, issue: number) =>
      await h.store.runs.insert({
        id,
        repo: 'acme/api',
        kind: 'afk_auto',
        subject: `issue#${issue}`,
        issueNumber: issue,
        prNumber: null,
        headSha: null,
        launchedAt: h.clock.now(),
        budgetDeadline: h.clock.now() + 3600_000,
        launcher: 'command',
        launcherRef: `fake:${id}`,
        secretHash: null,
        capAtLaunch: 2,
        liveAtLaunch: 1,
      });
    await insert('r-a', 1);
    await insert('r-b', 2);
    launcher.table.running.set('r-a', {} as never);
    launcher.table.ended.add('r-b'); // its process already exited; its report is on its way
    let release!: () => void;
    launcher.held.set('r-a', new Promise<void>((r) => (release = r)));
    const tick = reapRuns({
      store: h.store,
      launcher,
      now: h.clock.now,
      pauseThreshold: 3,
      repoRef: async () => ({ owner: 'acme', name: 'api', fullName: 'acme/api', installationId: 1 }),
      log: h.fleet.log,
    });
    // While the tick waits on r-a, r-b's report lands (answered 200).
    await new Promise((r) => setTimeout(r, 10));
    expect(
      await h.store.runs.recordReport(
        'r-b',
        { outcome: 'success', verdict: null, summary: 'opened #9' },
        h.clock.now(),
      ),
    ).toBe(true);
    release();
    const reaped = await tick;
    expect(reaped.map((r) => [r.run.id, r.outcome, r.reason])).toEqual([['r-b', 'success', null]]);
    expect(await h.store.runs.get('r-b')).toMatchObject({ status: 'ended', outcome: 'success', summary: 'opened #9' });
    expect((await h.store.repos.get('acme/api'))!.consecutiveFailures).toBe(0);
  });

  it('SP17 a run reaped as never started is cancelled too, in case its workflow turns up late', async () => {
    const cancelled: string[] = [];
    const launcher = new (class extends FakeLauncher {
      override async cancel(run: Run, repo: Parameters<FakeLauncher['cancel']>[1]): Promise<void> {
        cancelled.push(run.id);
        return super.cancel(run, repo);
      }
    })();
    const h = makeHarness({ launcher });
    await h.store.repos.ensure('acme/api', 1, h.clock.now());
    await h.store.runs.insert({
      id: 'r-lost',
      repo: 'acme/api',
      kind: 'afk_auto',
      subject: 'issue#1',
      issueNumber: 1,
      prNumber: null,
      headSha: null,
      launchedAt: h.clock.now(),
      budgetDeadline: h.clock.now() + 3600_000,
      launcher: 'command',
      launcherRef: 'fake:r-lost',
      secretHash: null,
      capAtLaunch: 2,
      liveAtLaunch: 1,
    });
    const reaped = await reapRuns({
      store: h.store,
      launcher,
      now: h.clock.now,
      pauseThreshold: 3,
      repoRef: async () => ({ owner: 'acme', name: 'api', fullName: 'acme/api', installationId: 1 }),
      log: h.fleet.log,
    });
    expect(reaped.map((r) => [r.run.id, r.outcome])).toEqual([['r-lost', 'cancelled']]);
    expect(cancelled).toEqual(['r-lost']);
  });
});
