import type { FleetContext } from '../context.js';
import { ok, refuse, type Result } from '../../kernel/result.js';
import type { Run } from '../../store/fleet/runs.js';

// BU02: `yoke runs settle RUN --usd N`. A run that ended without reporting what it spent (its job died, or an
// agent of your own that yoke cannot meter) holds its whole reservation against the budgets. An operator who
// has read what it spent (the model provider's usage page) sets it, once, recorded with who and when; the
// budgets then hold that instead.

const usd = (n: number) => n.toFixed(2);
const utc = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** What an ended run's cost already is, in words, for a settle that cannot change it. */
const costedHow = (run: Run): string =>
  run.settled ? `${run.settled.by} settled it at ${utc(run.settled.at)}` : 'it reported what it spent';

/** The reply to a settle that took. */
export const settledText = (run: Run, spent: number): string =>
  `Settled run ${run.id} (${run.repo} ${run.kind} ${run.subject}) at $${usd(spent)}: the budgets held $${usd(run.reservedUsd ?? 0)} for it, its reservation, and now hold $${usd(spent)}.`;

/** BU02: sets what an ended, unreported run spent, as `by`; refused, saying why, for a live run or one with a cost. */
export async function settleRun(
  ctx: Pick<FleetContext, 'store' | 'clock' | 'log'>,
  runId: string,
  spent: number,
  by: string,
): Promise<Result<string>> {
  const run = await ctx.store.runs.get(runId);
  if (!run) return refuse('run_not_found', { run: runId });
  if (run.status === 'live') return refuse('run_settle_live', { run: runId });
  if (run.cost) return refuse('run_already_costed', { run: runId, usd: usd(run.cost.usd), how: costedHow(run) });
  if (!(await ctx.store.spend.settle(runId, spent, by, ctx.clock.now()))) {
    // A late report or another settle came first.
    const now = (await ctx.store.runs.get(runId))!;
    return refuse('run_already_costed', { run: runId, usd: usd(now.cost?.usd ?? 0), how: costedHow(now) });
  }
  ctx.log.info({ run: runId, usd: spent, by }, 'settled what a run spent');
  return ok(settledText(run, spent));
}
