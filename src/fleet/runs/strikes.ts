import type { RepoState } from '../../store/fleet/repos.js';
import { isAfkKind, type Outcome, type Run } from '../../store/fleet/runs.js';
import type { Store } from '../../store/store.js';
import { isPaused } from '../repo-state.js';

export type StrikeEffect = 'none' | 'failure_added' | 'reset' | 'paused';

/** SP13/SP14: only AFK outcomes move the counter; landers and fixes never do. */
export function strikeEffect(run: Pick<Run, 'kind'>, outcome: Outcome): 'add' | 'reset' | 'none' {
  if (!isAfkKind(run.kind)) return 'none';
  if (outcome === 'failure' || outcome === 'timeout') return 'add';
  if (outcome === 'success') return 'reset';
  return 'none';
}

/**
 * Ends a live run and applies its strike in one transaction, so a run's
 * outcome is counted exactly once. Returns null when it had already ended.
 */
export function endRun(
  store: Store,
  run: Run,
  /** How it ended and why, when, and the strikes at which its repository pauses. */
  end: { outcome: Outcome; reason: string | null; now: number; pauseThreshold: number },
): Promise<{ effect: StrikeEffect; repo: RepoState | undefined } | null> {
  const { outcome, reason, now, pauseThreshold } = end;
  return store.write(async (t): Promise<{ effect: StrikeEffect; repo: RepoState | undefined } | null> => {
    if (!(await t.runs.end(run.id, outcome, reason, now))) return null;
    const effect = strikeEffect(run, outcome);
    if (effect === 'add') {
      const before = await t.repos.get(run.repo);
      const after = await t.repos.addFailure(run.repo, pauseThreshold, now);
      const paused = before !== undefined && !isPaused(before) && isPaused(after);
      return { effect: paused ? 'paused' : 'failure_added', repo: after };
    }
    if (effect === 'reset') {
      await t.repos.resetFailures(run.repo, now);
      return { effect: 'reset', repo: await t.repos.get(run.repo) };
    }
    return { effect: 'none', repo: await t.repos.get(run.repo) };
  });
}
