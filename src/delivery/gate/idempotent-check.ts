import { createHash } from 'node:crypto';
import { z } from 'zod';
import { makeRefusal, type Refusal } from '../../kernel/codes/table.js';
import { BusyError, refusedError, storeBusy } from './busy.js';
import { Refused, refusalJson } from '../../kernel/result.js';
import type { DeploymentRun } from '../../store/delivery/deployment-runs.js';
import type { Store } from '../../store/store.js';
import { deliveryRepo, type DeliveryContext } from '../context.js';
import { gateCheck } from './check.js';
import { errorStack } from '../../kernel/error-text.js';

// DX07/DX08/DX10: a dispatch carries a request id and an envelope. The id is
// reserved in the transaction that starts the work; a completed result is
// replayed as recorded, byte for byte; an in-flight copy is answered at once;
// a dispatch that failed before recording may be sent again. Past the
// response limit the answer is 202 with the reservation, and the result is
// recorded when the work ends.

export const DispatchEnvelope = z
  .object({
    driver: z.string().min(1).max(100),
    lease: z.string().min(1).max(100).nullable().default(null),
    stage: z.string().min(1).max(40),
    commit: z.string().min(1).max(64),
  })
  .strict();
export type DispatchEnvelope = z.infer<typeof DispatchEnvelope>;

export const REQUEST_ID = /^[\w.:-]{8,100}$/;

export interface DispatchPolicy {
  /** Past this, the answer is 202 with the reservation (under the hosted response cap). */
  responseLimitMs: number;
}

/** A reply as it goes on the wire: its status and its exact body. */
export interface WireReply {
  status: number;
  body: string;
  replayed: boolean;
}

const refusalReply = (r: Refusal): WireReply => ({
  status: r.status,
  body: JSON.stringify(refusalJson(r)),
  replayed: false,
});

export const envelopeHash = (runId: string, e: DispatchEnvelope): string =>
  createHash('sha256')
    .update(JSON.stringify([runId, e.stage, e.driver, e.lease, e.commit]))
    .digest('hex');

/** What a dispatch asks for: a gate check of a run's stage, under a request id and an envelope. */
export interface Dispatch {
  runId: string;
  stage: string;
  requestId: string | null;
  envelope: DispatchEnvelope;
}

/**
 * What the run itself says to a dispatch, before anything is reserved: a pure decision on the run as the
 * transaction read it. The checks go in the order the source document lists them; the first that fails is
 * the answer (`leftBehind`: a check of a stage the run has just left, answered as settled).
 */
export function dispatchRefusal(
  run: DeploymentRun,
  d: { runId: string; stage: string; envelope: DispatchEnvelope },
  now: number,
): Refusal | null {
  const { runId, stage, envelope } = d;
  const stages = run.settings.stages;
  const index = stages.findIndex((x) => x.name === stage);
  const leftBehind =
    index >= 0 &&
    (run.status === 'succeeded' ||
      (run.status === 'active' && (index < run.currentStage || run.closingSince !== null)));
  if (run.status !== 'active' && !leftBehind)
    return makeRefusal('deployment_run_not_active', { run: runId, status: run.status });
  const current = stages[run.currentStage]!;
  if (stage !== envelope.stage)
    return makeRefusal('dispatch_envelope_invalid', {
      run: runId,
      detail: `the envelope names stage ${envelope.stage}, the route ${stage}`,
    });
  if (envelope.commit !== run.commit)
    return makeRefusal('dispatch_envelope_invalid', {
      run: runId,
      detail: `the run is pinned at ${run.commit}, not ${envelope.commit}`,
    });
  // A stage the run does not have is named as such, with the run's stages, not as one to wait for.
  if (index < 0)
    return makeRefusal('deployment_stage_unknown', { run: runId, stage, stages: stages.map((x) => x.name) });
  if (current.name !== stage && !leftBehind)
    return makeRefusal('deployment_stage_not_current', {
      run: runId,
      stage,
      current: current.name,
      kind: current.kind,
    });
  // DX12: another driver's live check-in holds the run.
  if (run.driverId && run.leaseUntil !== null && run.leaseUntil > now && run.driverId !== envelope.driver)
    return makeRefusal('qa_checkin_busy', {
      run: runId,
      holder: run.driverId,
      seconds: Math.ceil((run.leaseUntil - now) / 1000),
    });
  if (envelope.lease !== null && envelope.lease !== run.leaseToken)
    return makeRefusal('dispatch_envelope_invalid', {
      run: runId,
      detail: "the lease it names is no longer the run's; check in again",
    });
  return null;
}

/** DX12, DX13: the contention points the store holds, each refused with its holder before anything is reserved. */
async function contention(t: Store, d: Dispatch & { requestId: string }, now: number): Promise<Refusal | null> {
  const { runId, stage, requestId } = d;
  const other = await t.dispatchRequests.inFlightFor(runId, requestId);
  if (other) return makeRefusal('run_busy', { run: runId, holder: `request ${other.requestId} of ${other.driver}` });
  const writing = (await t.executions.live(runId, stage, now)).find((e) => e.kind === 'deployment-stage');
  if (writing) return makeRefusal('qa_plan_busy', { run: runId, holder: `${writing.id} on ${writing.subject}` });
  const freezing = await t.workLocks.held(`freeze:${runId}:${stage}`, now, 5 * 60_000);
  if (freezing) return makeRefusal('qa_ownership_busy', { run: runId, stage, holder: freezing.holder });
  return null;
}

/**
 * Reserves the request id in one write, or answers without reserving: a completed copy replayed, or a
 * refusal. TR12: a reservation whose process is gone can never finish: it is failed first, so this id may
 * run again.
 */
async function reserve(
  ctx: DeliveryContext,
  d: Dispatch & { requestId: string },
  hash: string,
): Promise<WireReply | null> {
  const { runId, requestId } = d;
  return ctx.store.write(async (t) => {
    const now = ctx.clock.now();
    await t.dispatchRequests.failLapsed(now);
    const known = await t.dispatchRequests.get(requestId);
    if (known && (known.envelopeHash !== hash || known.runId !== runId))
      throw new Refused(makeRefusal('idempotency_key_reused', { request: requestId }));
    if (known?.state === 'completed') return { status: known.status!, body: known.response!, replayed: true };
    if (known?.state === 'in_flight')
      throw new BusyError(makeRefusal('idempotency_request_in_flight', { request: requestId, run: runId }));
    const refusal = dispatchRefusal((await t.deploymentRuns.get(runId))!, d, now) ?? (await contention(t, d, now));
    if (refusal) throw refusedError(refusal);
    await t.dispatchRequests.reserve({
      requestId,
      runId,
      stage: d.stage,
      envelopeHash: hash,
      driver: d.envelope.driver,
      owner: ctx.processId,
      at: now,
    });
    return null;
  });
}

export async function dispatchIdempotent(
  ctx: DeliveryContext,
  d: Dispatch,
  policy: DispatchPolicy,
  sleep: (ms: number) => Promise<void>,
): Promise<WireReply> {
  const { runId, stage, requestId } = d;
  if (!requestId || !REQUEST_ID.test(requestId)) return refusalReply(makeRefusal('idempotency_key_required'));
  const { store } = ctx;
  const run = await store.deploymentRuns.get(runId);
  if (!run) return refusalReply(makeRefusal('deployment_run_unknown', { run: runId }));
  const hash = envelopeHash(runId, d.envelope);
  // A completed result is replayed without a write transaction: replays must stay cheap.
  const recorded = await store.dispatchRequests.get(requestId);
  if (recorded?.state === 'completed' && recorded.envelopeHash === hash && recorded.runId === runId)
    return { status: recorded.status!, body: recorded.response!, replayed: true };

  let replay: WireReply | null;
  try {
    replay = await reserve(ctx, { ...d, requestId }, hash);
  } catch (err) {
    if (err instanceof Refused) return refusalReply(err.refusal);
    const busy = storeBusy(err);
    if (busy) return refusalReply(busy);
    throw err;
  }
  if (replay) return replay;

  const work = runReserved(ctx, runId, stage, requestId);
  const limit = sleep(policy.responseLimitMs).then(() => null);
  const done = await Promise.race([work, limit]);
  if (done) return done;
  // Past the response limit: the reservation answers; the result is recorded when the work ends (DX08).
  return {
    status: 202,
    body: JSON.stringify({
      request: requestId,
      run: runId,
      stage,
      state: 'in_flight',
      wait: `/yoke/api/deployment-runs/${runId}/requests/${requestId}?wait=60`,
    }),
    replayed: false,
  };
}

/** The reserved work: a gate check whose result is recorded, or whose failure leaves the id free to send again. */
async function runReserved(ctx: DeliveryContext, runId: string, stage: string, requestId: string): Promise<WireReply> {
  const { store, clock } = ctx;
  try {
    const run = (await store.deploymentRuns.get(runId))!;
    const dr = await deliveryRepo(ctx, run.repo);
    if (!dr.ok) {
      await store.dispatchRequests.fail(requestId, dr.refusal.message, clock.now(), ctx.processId);
      return refusalReply(dr.refusal);
    }
    const answer = await gateCheck({ ctx, dr: dr.value, run, stage });
    const body = JSON.stringify({ request: requestId, ...answer });
    await store.dispatchRequests.complete(requestId, 200, body, clock.now(), ctx.processId);
    return { status: 200, body, replayed: false };
  } catch (err) {
    const refusal = err instanceof Refused ? err.refusal : storeBusy(err);
    // An unexpected error's text stays in yoke's log: clients (and replays of this id) get what they can act on.
    const detail = refusal?.message ?? `an internal error; the yoke log has it under request ${requestId}`;
    await store.dispatchRequests.fail(requestId, detail, clock.now(), ctx.processId);
    if (refusal) return refusalReply(refusal);
    ctx.log.error(
      { run: runId, request: requestId, err: errorStack(err) },
      'dispatch failed before recording a result',
    );
    return refusalReply(makeRefusal('dispatch_request_failed', { request: requestId, detail }));
  }
}

/** DX08: the recorded result of a request, waiting for it up to waitMs (each wait within the hosted cap). */
export async function awaitResult(
  ctx: DeliveryContext,
  { runId, requestId }: { runId: string; requestId: string },
  wait: { waitMs: number; sleep: (ms: number) => Promise<void>; pollMs?: number },
): Promise<WireReply> {
  const { waitMs, sleep, pollMs = 100 } = wait;
  // Time waited is counted in polls, so the cap holds whatever clock the store runs on.
  for (let waited = 0; ; waited += pollMs) {
    const r = await ctx.store.dispatchRequests.get(requestId);
    if (!r || r.runId !== runId)
      return refusalReply(makeRefusal('dispatch_request_unknown', { request: requestId, run: runId }));
    if (r.state === 'completed') return { status: r.status!, body: r.response!, replayed: true };
    if (r.state === 'failed')
      return refusalReply(
        makeRefusal('dispatch_request_failed', { request: requestId, detail: r.detail ?? 'unknown' }),
      );
    // TR12: in flight under a process that is gone: it never finishes, so it is failed now and may be sent again.
    if (
      !(await ctx.store.processes.alive(r.owner ?? '')) &&
      (await ctx.store.dispatchRequests.failLapsed(ctx.clock.now())) > 0
    )
      continue;
    if (waited >= waitMs)
      return {
        status: 202,
        body: JSON.stringify({ request: requestId, run: runId, stage: r.stage, state: 'in_flight' }),
        replayed: false,
      };
    await sleep(pollMs);
  }
}
