import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { makeRefusal, type Refusal } from '../kernel/codes/table.js';
import type { Actor, DeliveryContext } from '../delivery/context.js';
import type { Result } from '../kernel/result.js';
import { DeployReport, reportDeployStage } from '../delivery/deployments/deploy-stage.js';
import { createDeploymentRun, findRunsOfItem, getDeploymentRun, removeMember } from '../delivery/runs/deployment-runs.js';
import { settleAfter } from '../delivery/gate/check.js';
import { awaitResult, DispatchEnvelope, dispatchIdempotent } from '../delivery/gate/idempotent-check.js';
import { CheckinBody, checkIn, endExecution, ExecutionBody, renewExecution, RenewBody, startExecution } from '../delivery/runs/executions.js';
import { QaTarget, qaWork, recordQaVerdict, VerdictBody, waiveQaCase, WaiveBody } from '../delivery/gate/verdicts.js';

// Delivery routes under /yoke/api/deployment-runs, for operators (the CLI and
// the deploy driver). Every body is parsed with zod where it enters.

const CreateBody = z
  .object({
    repo: z.string().regex(/^[\w.-]+\/[\w.-]+$/, 'repo is owner/name'),
    commit: z.string().regex(/^[0-9a-f]{4,40}$/i, 'commit is a SHA').optional(),
    items: z.array(z.string().min(1).max(30)).max(500).optional(),
    supersedes: z.string().min(1).max(100).optional(),
    creator: z.string().min(1).max(100).optional(),
  })
  .strict();
const RemoveBody = z.object({ reason: z.string().min(1).max(2000) }).strict();

export interface DeliveryIo {
  /** TR25: whether this credential may see a repository's rows in a listing. */
  mayRead: (repo: string) => Promise<boolean>;
  readJson: () => Promise<unknown>;
  send: (status: number, body: unknown) => true;
  /** A body exactly as recorded: a replayed dispatch answers byte for byte. */
  raw: (status: number, body: string) => true;
  refuse: (r: Refusal) => true;
}

const invalid = (error: z.ZodError): Refusal => makeRefusal('validation_failed', { detail: error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ') });

/** Handles a delivery route, or returns false when the path is not one. */
export interface DispatchOptions {
  responseLimitMs: number;
  hostedCapMs: number;
  sleep: (ms: number) => Promise<void>;
}

export async function handleDeliveryRoute(ctx: DeliveryContext, actor: Actor, req: IncomingMessage, url: URL, io: DeliveryIo, dispatch: DispatchOptions): Promise<boolean> {
  const path = url.pathname.replace(/\/+$/, '');
  if (!path.startsWith('/yoke/api/deployment-runs')) return false;
  const method = req.method ?? 'GET';
  const answer = <T>(r: Result<T>, status = 200) => (r.ok ? io.send(status, r.value) : io.refuse(r.refusal));
  const parse = async <S extends z.ZodType>(schema: S): Promise<{ ok: true; data: z.output<S> } | { ok: false }> => {
    const parsed = schema.safeParse(await io.readJson());
    if (parsed.success) return { ok: true, data: parsed.data };
    io.refuse(invalid(parsed.error));
    return { ok: false };
  };

  const seen = async <R extends { repo: string }>(rows: readonly R[]): Promise<R[]> => {
    const out: R[] = [];
    for (const r of rows) if (await io.mayRead(r.repo)) out.push(r);
    return out;
  };
  if (path === '/yoke/api/deployment-runs' && method === 'GET') {
    const item = url.searchParams.get('item');
    if (item) {
      const ids = await findRunsOfItem(ctx, item);
      const rows = await seen((await ctx.store.deploymentRuns.list()).filter((r) => ids.includes(r.id)));
      return io.send(200, { runs: ids.filter((id) => rows.some((r) => r.id === id)) });
    }
    // Every run (or one repository's), newest first, with where each is.
    const repo = url.searchParams.get('repo');
    const list = (await seen(await ctx.store.deploymentRuns.list()))
      .filter((r) => !repo || r.repo.toLowerCase() === repo.toLowerCase())
      .sort((a, b) => b.createdAt - a.createdAt)
      .slice(0, 100)
      .map((r) => ({ id: r.id, repo: r.repo, commit: r.commit, status: r.status === 'active' && r.closingSince !== null ? 'closing' : r.status, stage: r.status === 'active' && r.closingSince === null ? (r.settings.stages[r.currentStage]?.name ?? null) : null }));
    return io.send(200, { list });
  }
  if (path === '/yoke/api/deployment-runs' && method === 'POST') {
    const body = await parse(CreateBody);
    if (!body.ok) return true;
    // TR25: a person creates as themselves; only an operator token names someone else.
    if (actor.role === 'person') {
      if (body.data.creator !== undefined && body.data.creator !== actor.login) return io.refuse(makeRefusal('identity_field_not_yours', { field: 'creator', named: body.data.creator, allowed: actor.login }));
      body.data.creator = actor.login;
    }
    return answer(await createDeploymentRun(ctx, body.data), 201);
  }
  const request = /^\/yoke\/api\/deployment-runs\/([\w-]{1,100})\/requests\/([\w.:-]{1,100})$/.exec(path);
  if (request && method === 'GET') {
    // DX08: each wait stays within the hosted cap.
    const waitMs = Math.min(Math.max(0, Number(url.searchParams.get('wait') ?? '0') || 0) * 1000, dispatch.hostedCapMs);
    const r = await awaitResult(ctx, request[1]!, request[2]!, waitMs, dispatch.sleep);
    return io.raw(r.status, r.body);
  }
  const run = /^\/yoke\/api\/deployment-runs\/([\w-]{1,100})\/(checkin|executions\/([\w-]{1,40})\/(end|renew))$/.exec(path);
  if (run && method === 'POST') {
    if (run[2] === 'checkin') {
      const body = await parse(CheckinBody);
      if (!body.ok) return true;
      if (actor.role === 'person' && body.data.driver !== actor.login) return io.refuse(makeRefusal('identity_field_not_yours', { field: 'driver', named: body.data.driver, allowed: actor.login }));
      return answer(await checkIn(ctx, run[1]!, body.data));
    }
    if (run[4] === 'renew') {
      const body = await parse(RenewBody);
      return body.ok ? answer(await renewExecution(ctx, run[1]!, run[3]!, body.data.lease_seconds)) : true;
    }
    return answer(await endExecution(ctx, run[1]!, run[3]!));
  }
  const m = /^\/yoke\/api\/deployment-runs\/([\w-]{1,100})(?:\/(members\/([\w-]{1,30})\/remove|stages\/([\w-]{1,40})\/(dispatch|work|verdicts|waive|deploy|executions)))?$/.exec(path);
  if (!m) return io.refuse(makeRefusal('not_found'));
  const [, runId, , item, stage, action] = m as unknown as [string, string, string | undefined, string | undefined, string | undefined, string | undefined];
  if (!action && !item && method === 'GET') return answer(await getDeploymentRun(ctx, runId));
  if (item && method === 'POST') {
    const body = await parse(RemoveBody);
    return body.ok ? answer(await removeMember(ctx, actor, runId, decodeURIComponent(item), body.data.reason)) : true;
  }
  if (stage && action === 'work' && method === 'GET') {
    const target = QaTarget.safeParse(Object.fromEntries(url.searchParams));
    return target.success ? answer(await qaWork(ctx, actor, runId, stage, target.data)) : io.refuse(invalid(target.error));
  }
  if (stage && method === 'POST') {
    if (action === 'dispatch') {
      const envelope = await parse(DispatchEnvelope);
      if (!envelope.ok) return true;
      const key = req.headers['idempotency-key'];
      const r = await dispatchIdempotent(ctx, runId, stage, typeof key === 'string' ? key : null, envelope.data, { responseLimitMs: dispatch.responseLimitMs }, dispatch.sleep);
      return io.raw(r.status, r.body);
    }
    if (action === 'verdicts') {
      const body = await parse(VerdictBody);
      if (!body.ok) return true;
      const recorded = await recordQaVerdict(ctx, actor, runId, stage, body.data);
      // A verdict callback settles what it can, unless a live deployment-stage execution defers it (DX05).
      if (recorded.ok) await settleAfter(ctx, runId, stage, recorded.value.subject);
      return answer(recorded, 201);
    }
    if (action === 'executions') {
      const body = await parse(ExecutionBody);
      if (!body.ok) return true;
      const key = req.headers['idempotency-key'];
      if (key !== undefined && (typeof key !== 'string' || !/^[\w.:-]{1,100}$/.test(key))) return io.refuse(makeRefusal('validation_failed', { detail: 'Idempotency-Key: 1-100 letters, digits, _ . : or -' }));
      return answer(await startExecution(ctx, runId, stage, body.data, key ?? null), 201);
    }
    if (action === 'waive') {
      const body = await parse(WaiveBody);
      return body.ok ? answer(await waiveQaCase(ctx, actor, runId, stage, body.data), 201) : true;
    }
    if (action === 'deploy') {
      const body = await parse(DeployReport);
      return body.ok ? answer(await reportDeployStage(ctx, runId, stage, body.data)) : true;
    }
  }
  return io.refuse(makeRefusal('not_found'));
}
