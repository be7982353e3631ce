import type { Io } from '../context.js';
import type { Launcher, Liveness } from '../../launcher/launcher.js';
import type { RepoRef } from '../../forge/types.js';
import type { Outcome, Run } from '../../store/fleet/runs.js';
import { endRun, type StrikeEffect } from './strikes.js';
import { parseActionsRef } from '../../launcher/actions.js';
import type { Collected } from './run-results.js';
import { errorStack } from '../../kernel/error-text.js';

/** What a reap tick works through: the store, the clock, the log and the runs' launcher. */
type Reaping = Pick<Io, 'store' | 'clock' | 'log'> & { launcher: Launcher };

/** How the reaper reads a run's repository and result, and when it gives up on them. */
export interface ReapOptions {
  pauseThreshold: number;
  repoRef: (fullName: string) => Promise<RepoRef | null>;
  /**
   * Runs that reach yoke through GitHub: reads the result a finished workflow
   * run left behind, before the run is ended without one.
   */
  collect?: (run: Run, repo: RepoRef, workflowRunId: number) => Promise<Collected>;
  /** How long past its deadline a run whose result GitHub could not hand over yet is still waited for. */
  resultRetryMs?: number;
  /** BU02: the ended runs whose finished workflow was read for their spend already (kept by the engine, per process). */
  spendRead?: Set<string>;
}

export interface Reaped {
  run: Run;
  outcome: Outcome;
  reason: string | null;
  effect: StrikeEffect;
}

/** What the reaper does with one live run, decided from its row and its liveness. */
export function decideReap(
  run: Run,
  now: number,
  liveness: Liveness | null,
): { outcome: Outcome; reason: string | null } | null {
  if (now >= run.budgetDeadline) {
    // A run that reported within its budget keeps its outcome; the cancel only cleans up.
    if (run.reportedOutcome)
      return { outcome: run.reportedOutcome, reason: 'reported, then cancelled at the budget deadline' };
    return { outcome: 'timeout', reason: 'budget deadline passed' };
  }
  if (!liveness) return null;
  if (liveness.state === 'ended') {
    if (run.reportedOutcome) return { outcome: run.reportedOutcome, reason: null };
    return {
      outcome: 'failure',
      reason: `ended without reporting a result${liveness.detail ? ` (${liveness.detail})` : ''}`,
    };
  }
  if (liveness.state === 'never_started') return { outcome: 'cancelled', reason: liveness.detail };
  return null;
}

/** Ends every live run that is past its deadline or no longer alive (SP17). */
export async function reapRuns(deps: Reaping, how: ReapOptions): Promise<Reaped[]> {
  const reaped: Reaped[] = [];
  for (const run of await deps.store.runs.listLive()) {
    const repo = await how.repoRef(run.repo);
    let liveness: Liveness | null = null;
    const now = deps.clock.now();
    const pastDeadline = now >= run.budgetDeadline;
    // A result handed back through GitHub is read once its workflow run has ended, before anything ends the run.
    if (repo && (!pastDeadline || how.collect)) {
      try {
        liveness = await deps.launcher.liveness(run, repo);
      } catch (err) {
        deps.log.warn({ run: run.id, err: errorStack(err) }, 'liveness check failed; the next reaper tick asks again');
      }
      if (liveness && 'ref' in liveness && liveness.ref && liveness.ref !== run.launcherRef) {
        await deps.store.runs.setLauncherRef(run.id, liveness.ref);
      }
      if (liveness?.state === 'ended' && how.collect && !run.reportedOutcome) {
        const held = await collectFor(deps, how, { run, repo }, liveness);
        if (held === 'hold') continue;
        liveness = held;
      }
    }
    if (pastDeadline && repo) {
      try {
        await deps.launcher.cancel(run, repo);
      } catch (err) {
        deps.log.warn({ run: run.id, err: errorStack(err) }, 'cancel at deadline failed; reaping the run anyway');
      }
    }
    // Decide from the run as it is now, inside the write that ends it: a report that landed while this tick
    // read other runs' liveness (or this one's) is seen, and a recorded result always wins.
    const done = await deps.store.write(async (t) => {
      const fresh = await t.runs.get(run.id);
      if (!fresh || fresh.status !== 'live') return null;
      const decision = decideReap(fresh, now, liveness);
      if (!decision) return null;
      const ended = await endRun(t, fresh, { ...decision, now, pauseThreshold: how.pauseThreshold });
      // TR33: a run that never started carried nothing: what it was asked goes to the next run.
      if (ended && liveness?.state === 'never_started') {
        await t.asks.reopen(fresh.id);
        // BU02: nor did it spend: its reservation goes back to the budgets.
        await t.spend.release(fresh.id);
      }
      return ended && { run: fresh, ...decision, effect: ended.effect };
    });
    if (done) reaped.push(done);
    // A workflow that turned up only now, after the grace: cancelled, so no agent works for a run yoke ended.
    if (done && liveness?.state === 'never_started' && repo)
      await deps.launcher
        .cancel(run, repo)
        .catch((err: unknown) =>
          deps.log.warn({ run: run.id, err: errorStack(err) }, 'could not cancel a run reaped as never started'),
        );
  }
  await cancelLateWorkflows(deps, how);
  if (how.collect) await collectLateSpend(deps, how);
  return reaped;
}

/**
 * BU02: a run the reaper ended before its workflow handed its result back (its deadline passed while the agent
 * worked on) keeps its reservation until what it spent is known. Until its deadline plus the wait for a result,
 * each tick looks at its workflow run; once that has ended, its result is read once, and the spend it names is
 * recorded against the run (collectHandedResult: only the spend). One that names none stays for an operator to settle.
 */
async function collectLateSpend(deps: Reaping, how: ReapOptions): Promise<void> {
  const since = deps.clock.now() - (how.resultRetryMs ?? RESULT_RETRY_MS);
  for (const run of await deps.store.runs.listAwaitingSpend(since)) {
    if (how.spendRead?.has(run.id)) continue;
    const repo = await how.repoRef(run.repo);
    if (!repo) continue;
    try {
      const l = await deps.launcher.liveness(run, repo);
      const id = l.state === 'ended' ? parseActionsRef(l.ref ?? run.launcherRef)?.id : undefined;
      if (!id) continue;
      const got = await how.collect!(run, repo, id);
      if (got.state !== 'retry') how.spendRead?.add(run.id);
    } catch (err) {
      deps.log.warn(
        { run: run.id, err: errorStack(err) },
        'could not read what an ended run spent; the next tick does',
      );
    }
  }
}

/**
 * SP17: a workflow GitHub lists only after its run was reaped as never started would run an agent outside the
 * cap and the budget. Until such a run's deadline (past it, the runner stops at once), each tick looks for its
 * workflow again; one that turned up is cancelled and bound to its run, so it is not looked for again.
 */
async function cancelLateWorkflows(deps: Reaping, how: Pick<ReapOptions, 'repoRef'>): Promise<void> {
  for (const run of await deps.store.runs.listUnfoundCancelled(deps.clock.now())) {
    const repo = await how.repoRef(run.repo);
    if (!repo) continue;
    try {
      const l = await deps.launcher.liveness(run, repo);
      const ref = 'ref' in l ? l.ref : undefined;
      if (!ref || ref === run.launcherRef) continue;
      if (l.state !== 'ended') await deps.launcher.cancel({ ...run, launcherRef: ref }, repo);
      await deps.store.runs.setLauncherRef(run.id, ref);
      deps.log.warn(
        { run: run.id, repo: run.repo, workflowRun: ref },
        l.state === 'ended'
          ? 'a workflow turned up after its run was reaped as never started, already ended'
          : 'a workflow turned up after its run was reaped as never started; cancelled',
      );
    } catch (err) {
      deps.log.warn(
        { run: run.id, err: errorStack(err) },
        'could not look again for the workflow of a run reaped as never started; the next tick does',
      );
    }
  }
}

/** How long past a run's deadline a result it hands back through GitHub is still read, by default. */
const RESULT_RETRY_MS = 30 * 60_000;

/** The liveness to decide on once the handed-back result was read, or 'hold' to ask again next tick. */
async function collectFor(
  deps: Reaping,
  how: ReapOptions,
  { run, repo }: { run: Run; repo: RepoRef },
  liveness: Liveness & { state: 'ended' },
): Promise<Liveness | 'hold'> {
  const now = deps.clock.now();
  const id = parseActionsRef(liveness.ref ?? run.launcherRef)?.id;
  if (!id) return liveness;
  const got = await how.collect!(run, repo, id);
  if (got.state === 'retry') {
    // Never a failure (nor a strike) for GitHub's fault, though not forever past the deadline.
    if (now < run.budgetDeadline + (how.resultRetryMs ?? RESULT_RETRY_MS)) {
      deps.log.info(
        { run: run.id, detail: got.detail },
        'could not read the result the run handed back; the next reaper tick tries again',
      );
      return 'hold';
    }
    return { ...liveness, detail: `its result could not be read: ${got.detail}` };
  }
  if (got.state === 'none') return { ...liveness, detail: got.detail };
  return liveness;
}
