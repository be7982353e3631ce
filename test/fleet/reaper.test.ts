import { describe, expect, it, vi } from 'vitest';
import { reapRuns } from '../../src/fleet/runs/reaper.js';
import type { Liveness } from '../../src/launcher/launcher.js';
import type { Run } from '../../src/store/fleet/runs.js';
import { ActionsLauncher } from '../../src/launcher/actions.js';
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

/** One reaper tick over acme/api's runs, through this launcher. */
const reapOnce = (h: ReturnType<typeof makeHarness>, launcher: Parameters<typeof reapRuns>[0]['launcher']) =>
  reapRuns(
    {
      store: h.store,
      launcher,
      clock: h.clock,
      log: h.fleet.log,
    },
    {
      pauseThreshold: 3,
      repoRef: async () => ({ owner: 'acme', name: 'api', fullName: 'acme/api', installationId: 1 }),
    },
  );

/** A live AFK run of acme/api for issue 1, launched now with an hour's budget. */
const insertRun = (
  h: ReturnType<typeof makeHarness>,
  id: string,
  launcher: 'command' | 'actions',
  launcherRef: string,
) =>
  h.store.runs.insert({
    id,
    repo: 'acme/api',
    kind: 'afk_auto',
    subject: 'issue#1',
    issueNumber: 1,
    prNumber: null,
    headSha: null,
    launchedAt: h.clock.now(),
    budgetDeadline: h.clock.now() + 3600_000,
    launcher,
    launcherRef,
    secretHash: null,
    capAtLaunch: 2,
    liveAtLaunch: 1,
  });

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
    const tick = reapOnce(h, launcher);
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
    await insertRun(h, 'r-lost', 'command', 'fake:r-lost');
    const reaped = await reapOnce(h, launcher);
    expect(reaped.map((r) => [r.run.id, r.outcome])).toEqual([['r-lost', 'cancelled']]);
    expect(cancelled).toEqual(['r-lost']);
  });

  it('SP17 a workflow GitHub lists only after its run was reaped as never started is looked for again until the run\u2019s deadline, cancelled once it turns up, and then left alone', async () => {
    const h = makeHarness();
    const t0 = h.clock.now();
    const launcher = new ActionsLauncher({
      forge: h.forge,
      now: h.clock.now,
      unseenGraceMs: 60_000,
      reach: 'api',
      runner: async () => ({ code: '', sha256: 'x' }),
    });
    const repo = h.forge.addRepo('acme/api', {});
    await h.store.repos.ensure('acme/api', 1, t0);
    await insertRun(h, 'r-late', 'actions', 'pending:yoke-run.yml@main');
    const warned: string[] = [];
    const tick = () =>
      reapRuns(
        {
          store: h.store,
          launcher,
          clock: h.clock,
          log: { ...h.fleet.log, warn: (_o: unknown, msg: string) => void warned.push(msg) } as never,
        },
        {
          pauseThreshold: 3,
          repoRef: async () => repo.ref,
        },
      );
    h.clock.advance(120_000);
    expect((await tick()).map((r) => [r.run.id, r.outcome])).toEqual([['r-late', 'cancelled']]);
    expect(h.forge.cancelled).toEqual([]);
    // Nothing yet on the next tick either; then GitHub lists the workflow run.
    await tick();
    h.forge.workflowRuns.set('r-late', {
      id: 4711,
      status: 'queued',
      conclusion: null,
      repositoryId: 1,
      event: 'workflow_dispatch',
    });
    await tick();
    expect(h.forge.cancelled).toEqual([4711]);
    expect((await h.store.runs.get('r-late'))!.launcherRef).toBe('yoke-run.yml@main#4711');
    expect(warned).toEqual(['a workflow turned up after its run was reaped as never started; cancelled']);
    // Bound now: not looked for again.
    const find = vi.spyOn(h.forge, 'findWorkflowRun');
    await tick();
    expect(h.forge.cancelled).toEqual([4711]);
    expect(find).not.toHaveBeenCalled();
  });

  it('SP17 past its deadline a run reaped as never started is no longer looked for: the runner stops at once there', async () => {
    const h = makeHarness();
    const t0 = h.clock.now();
    await h.store.repos.ensure('acme/api', 1, t0);
    await insertRun(h, 'r-old', 'actions', 'pending:yoke-run.yml@main');
    await h.store.runs.end('r-old', 'cancelled', 'no yoke-run.yml run for r-old appeared', t0 + 120_000);
    expect((await h.store.runs.listUnfoundCancelled(t0 + 3599_000)).map((r) => r.id)).toEqual(['r-old']);
    expect(await h.store.runs.listUnfoundCancelled(t0 + 3600_000)).toEqual([]);
  });
});
