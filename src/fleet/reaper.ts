import type { Launcher, Liveness } from '../launcher/launcher.js';
import type { Log } from '../kernel/log.js';
import type { RepoRef } from '../forge/types.js';
import type { Outcome, Run } from '../store/runs.js';
import type { Store } from '../store/store.js';
import { endRun, type StrikeEffect } from './strikes.js';

export interface ReapDeps {
  store: Store;
  launcher: Launcher;
  now: () => number;
  pauseThreshold: number;
  repoRef: (fullName: string) => Promise<RepoRef | null>;
  log: Log;
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
export async function reapRuns(deps: ReapDeps): Promise<Reaped[]> {
  const reaped: Reaped[] = [];
  for (const run of await deps.store.runs.listLive()) {
    const repo = await deps.repoRef(run.repo);
    let liveness: Liveness | null = null;
    const now = deps.now();
    if (now >= run.budgetDeadline) {
      if (repo) {
        try {
          await deps.launcher.cancel(run, repo);
        } catch (err) {
          deps.log.warn({ run: run.id, err: String(err) }, 'cancel at deadline failed; reaping the run anyway');
        }
      }
    } else if (repo) {
      try {
        liveness = await deps.launcher.liveness(run, repo);
      } catch (err) {
        deps.log.warn({ run: run.id, err: String(err) }, 'liveness check failed; the next reaper tick asks again');
      }
      if (liveness && 'ref' in liveness && liveness.ref && liveness.ref !== run.launcherRef) {
        await deps.store.runs.setLauncherRef(run.id, liveness.ref);
      }
    }
    // Decide from the run as it is now, inside the write that ends it: a report that landed while this tick
    // read other runs' liveness (or this one's) is seen, and a recorded result always wins.
    const done = await deps.store.write(async (t) => {
      const fresh = await t.runs.get(run.id);
      if (!fresh || fresh.status !== 'live') return null;
      const decision = decideReap(fresh, now, liveness);
      if (!decision) return null;
      const ended = await endRun(t, fresh, decision.outcome, decision.reason, now, deps.pauseThreshold);
      return ended && { run: fresh, ...decision, effect: ended.effect };
    });
    if (done) reaped.push(done);
  }
  return reaped;
}
