import { ok, type Result } from '../../src/kernel/result.js';
import type { DeliveryContext } from '../../src/delivery/context.js';
import { gateCheck, type DispatchAnswer } from '../../src/delivery/gate/check.js';
import { runAtStage } from '../../src/delivery/runs/deployment-runs.js';

// One gate check of a run's current stage, without the request id and
// reservation a driver's dispatch goes through (delivery/gate/idempotent-check.ts):
// what the tests and the bench check a stage with.

export async function dispatchStage(
  ctx: DeliveryContext,
  runId: string,
  stageName: string,
): Promise<Result<DispatchAnswer>> {
  const got = await runAtStage(ctx, runId, stageName, null);
  if (!got.ok) return got;
  const { run, dr, stage: current } = got.value;
  if (current.kind === 'deploy') {
    return ok({
      run: run.id,
      stage: stageName,
      commit: run.commit,
      state: 'deploy',
      woken: [],
      waits: [],
      members: [],
      groups: [],
      capture: [],
      triage: [],
      notices: null,
      closeout: null,
      nextStage: stageName,
    });
  }
  return ok(await gateCheck({ ctx, dr, run, stage: stageName }));
}
