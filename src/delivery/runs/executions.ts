import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { ExecutionKind } from '../../store/delivery/executions.js';
import { OPERATOR, type DeliveryContext, type StageRef } from '../context.js';
import { ok, refuse, type Result } from '../../kernel/result.js';
import { activeRun } from './deployment-runs.js';
import { settleAfter } from '../gate/check.js';
import { qaWork } from '../gate/verdicts.js';

// Plan executions and the driver's lease. An execution brackets a run of a
// plan's cases; one on the deployment's behalf (a shared group, the driver's
// capture) defers its members' close-out and notices until it ends (DX05).

/** TR12: how long an execution lives without a renewal, by default and at most. */
export const EXECUTION_LEASE = { defaultSeconds: 120, maxSeconds: 3600 } as const;
const leaseSeconds = z.number().int().min(1).max(EXECUTION_LEASE.maxSeconds).optional();

export const ExecutionBody = z.union([
  z
    .object({
      item: z.string().min(1).max(30),
      plan: z.string().min(1).max(200).optional(),
      kind: z.enum(['qa-stage', 'deployment-stage']).optional(),
      lease_seconds: leaseSeconds,
    })
    .strict(),
  z
    .object({
      plan: z.string().min(1).max(200),
      kind: z.enum(['qa-stage', 'deployment-stage']).optional(),
      lease_seconds: leaseSeconds,
    })
    .strict(),
]);
export const RenewBody = z.object({ lease_seconds: leaseSeconds }).strict();
export type ExecutionBody = z.infer<typeof ExecutionBody>;

export const CheckinBody = z
  .object({
    driver: z.string().min(1).max(100),
    lease_seconds: z.number().int().min(1).max(3600).default(60),
    transport: z.enum(['https', 'db']).default('https'),
  })
  .strict();
export type CheckinBody = z.input<typeof CheckinBody>;

export interface ExecutionAnswer {
  id: string;
  subject: string;
  kind: ExecutionKind;
  leaseUntil: number;
}

/**
 * Opens a plan execution with a lease its runner renews (TR12). The same
 * start sent again with its idempotency key (a lost answer, a retry) answers
 * with the execution it opened, so no second one is left behind.
 */
export async function startExecution(
  ctx: DeliveryContext,
  { runId, stage }: StageRef,
  body: ExecutionBody,
  key: string | null,
): Promise<Result<ExecutionAnswer>> {
  const work = await qaWork(
    ctx,
    OPERATOR,
    { runId, stage },
    'item' in body ? { item: body.item, ...(body.plan ? { plan: body.plan } : {}) } : { plan: body.plan },
  );
  if (!work.ok) return work;
  const kind: ExecutionKind = body.kind ?? ('item' in body ? 'qa-stage' : 'deployment-stage');
  const now = ctx.clock.now();
  const leaseUntil = now + (body.lease_seconds ?? EXECUTION_LEASE.defaultSeconds) * 1000;
  const e = await ctx.store.executions.start({
    id: `ex-${randomBytes(5).toString('hex')}`,
    runId,
    stage,
    subject: work.value.subject,
    kind,
    at: now,
    leaseUntil,
    requestKey: key,
  });
  if (e.stage !== stage || e.subject !== work.value.subject || e.kind !== kind)
    return refuse('idempotency_key_reused', { request: key ?? e.id });
  return ok({ id: e.id, subject: e.subject, kind: e.kind, leaseUntil: e.leaseUntil ?? leaseUntil });
}

/** TR12: the runner is still at it: its execution lives on for another lease. */
export async function renewExecution(
  ctx: DeliveryContext,
  runId: string,
  executionId: string,
  seconds: number | undefined,
): Promise<Result<{ id: string; leaseUntil: number }>> {
  const e = await ctx.store.executions.get(executionId);
  if (!e || e.runId !== runId) return refuse('deployment_run_unknown', { run: `${runId} execution ${executionId}` });
  const until = ctx.clock.now() + (seconds ?? EXECUTION_LEASE.defaultSeconds) * 1000;
  if (!(await ctx.store.executions.renew(executionId, until)))
    return refuse('execution_ended', { run: runId, execution: executionId });
  return ok({ id: executionId, leaseUntil: until });
}

/** Ends an execution; the stage then settles what it delivered (DX05). Ending one that already ended answers the same. */
export async function endExecution(
  ctx: DeliveryContext,
  runId: string,
  executionId: string,
): Promise<Result<{ id: string; state: string }>> {
  const e = await ctx.store.executions.get(executionId);
  if (!e || e.runId !== runId) return refuse('deployment_run_unknown', { run: `${runId} execution ${executionId}` });
  await ctx.store.executions.end(executionId, ctx.clock.now());
  const answer = await settleAfter(ctx, runId, e.stage, e.subject);
  return ok({ id: executionId, state: answer?.state ?? 'ended' });
}

/** The driver checks in: it takes the lease, or renews its own; another driver's current lease refuses it. */
export async function checkIn(
  ctx: DeliveryContext,
  runId: string,
  body: CheckinBody,
): Promise<Result<{ run: string; driver: string; lease: string; leaseUntil: number; tookOver: boolean }>> {
  const got = await activeRun(ctx, runId);
  if (!got.ok) return got;
  const now = ctx.clock.now();
  // DX09: a run driven over HTTPS is never recovered through the database door.
  const transport = body.transport ?? 'https';
  if (got.value.run.driverTransport === 'https' && transport === 'db')
    return refuse('transport_switch_refused', { run: runId });
  const until = now + (body.lease_seconds ?? 60) * 1000;
  const r = await ctx.store.deploymentRuns.checkIn(
    runId,
    body.driver,
    until,
    now,
    `ls-${randomBytes(6).toString('hex')}`,
    transport,
  );
  // DX13: contention is answered after the check-in transaction rolled back; the driver retries.
  if (!r.ok)
    return refuse('qa_checkin_busy', { run: runId, holder: r.holder, seconds: Math.ceil((r.until - now) / 1000) });
  return ok({ run: runId, driver: body.driver, lease: r.token, leaseUntil: until, tookOver: r.tookOver });
}
