import { makeRefusal } from '../../kernel/codes/table.js';
import type { DeliveryContext } from '../../delivery/context.js';
import { reportDeployStage } from '../../delivery/deployments/deploy-stage.js';
import {
  createDeploymentRun,
  findRunsOfItem,
  getDeploymentRun,
  removeMember,
} from '../../delivery/runs/deployment-runs.js';
import { settleAfter } from '../../delivery/gate/check.js';
import { awaitResult, dispatchIdempotent } from '../../delivery/gate/idempotent-check.js';
import { checkIn, endExecution, renewExecution, startExecution } from '../../delivery/runs/executions.js';
import { qaWork, recordQaVerdict, waiveQaCase } from '../../delivery/gate/verdicts.js';
import { replyWith, type JsonHandlers } from './handler.js';
import { sameRepo } from '../../kernel/ids.js';

// The delivery routes under /yoke/api/deployment-runs, for operators (the
// CLI and the deploy driver) and people by their role. Bodies and queries
// arrive parsed by their route's schema (routes.ts).

export interface DispatchOptions {
  responseLimitMs: number;
  hostedCapMs: number;
  sleep: (ms: number) => Promise<void>;
}

export type DeliveryRouteName =
  | 'deploymentRuns'
  | 'createDeploymentRun'
  | 'deploymentRun'
  | 'gateCheckResult'
  | 'checkin'
  | 'endExecution'
  | 'renewExecution'
  | 'removeMember'
  | 'qaWork'
  | 'gateCheck'
  | 'verdict'
  | 'waive'
  | 'deploy'
  | 'startExecution';

const IDEMPOTENCY_KEY = /^[\w.:-]{1,100}$/;

type RunRouteName = 'deploymentRuns' | 'createDeploymentRun' | 'deploymentRun';
type QaRouteName = 'renewExecution' | 'endExecution' | 'qaWork' | 'verdict' | 'startExecution' | 'waive';

/** TR25: the rows of a listing whose repository the caller may read. */
const seen = async <R extends { repo: string }>(
  rows: readonly R[],
  mayRead: (repo: string) => Promise<boolean>,
): Promise<R[]> => {
  const out: R[] = [];
  for (const r of rows) if (await mayRead(r.repo)) out.push(r);
  return out;
};

/** The deployment runs themselves: listed (what the caller may read), created, read. */
function runHandlers(ctx: DeliveryContext): JsonHandlers<RunRouteName> {
  return {
    async deploymentRuns({ query, mayRead }) {
      if (query.item) {
        const ids = await findRunsOfItem(ctx, query.item);
        const rows = await seen(
          (await ctx.store.deploymentRuns.list()).filter((r) => ids.includes(r.id)),
          mayRead,
        );
        return { status: 200, json: { runs: ids.filter((id) => rows.some((r) => r.id === id)) } };
      }
      // Every run (or one repository's), newest first, with where each is.
      const repo = query.repo;
      const list = (await seen(await ctx.store.deploymentRuns.list(), mayRead))
        .filter((r) => !repo || sameRepo(r.repo, repo))
        .sort((a, b) => b.createdAt - a.createdAt)
        .slice(0, 100)
        .map((r) => ({
          id: r.id,
          repo: r.repo,
          commit: r.commit,
          status: r.status === 'active' && r.closingSince !== null ? 'closing' : r.status,
          stage:
            r.status === 'active' && r.closingSince === null ? (r.settings.stages[r.currentStage]?.name ?? null) : null,
        }));
      return { status: 200, json: { list } };
    },
    async createDeploymentRun({ body, actor }) {
      // TR25: a person creates as themselves; only an operator token names someone else.
      if (actor.role === 'person') {
        if (body.creator !== undefined && body.creator !== actor.login)
          return {
            refusal: makeRefusal('identity_field_not_yours', {
              field: 'creator',
              named: body.creator,
              allowed: actor.login,
            }),
          };
        body.creator = actor.login;
      }
      return replyWith(await createDeploymentRun(ctx, body), 201);
    },
    async deploymentRun({ params }) {
      return replyWith(await getDeploymentRun(ctx, params.run!));
    },
  };
}

/** A run's stages: checking in, gate checks and their results, removing a member, deploy stages. */
function stageHandlers(
  ctx: DeliveryContext,
  dispatch: DispatchOptions,
): JsonHandlers<Exclude<DeliveryRouteName, QaRouteName | RunRouteName>> {
  return {
    async gateCheckResult({ params, query }) {
      // DX08: each wait stays within the hosted cap.
      const waitMs = Math.min(Math.max(0, Number(query.wait ?? '0') || 0) * 1000, dispatch.hostedCapMs);
      const r = await awaitResult(
        ctx,
        { runId: params.run!, requestId: params.request! },
        { waitMs, sleep: dispatch.sleep },
      );
      return { status: r.status, recorded: r.body };
    },
    async checkin({ params, body, actor }) {
      if (actor.role === 'person' && body.driver !== actor.login)
        return {
          refusal: makeRefusal('identity_field_not_yours', {
            field: 'driver',
            named: body.driver,
            allowed: actor.login,
          }),
        };
      return replyWith(await checkIn(ctx, params.run!, body));
    },
    async removeMember({ params, body, actor }) {
      return replyWith(await removeMember(ctx, actor, params.run!, { item: params.item!, reason: body.reason }));
    },
    async gateCheck({ params, body, headers }) {
      const key = headers['idempotency-key'];
      const r = await dispatchIdempotent(
        ctx,
        { runId: params.run!, stage: params.stage!, requestId: typeof key === 'string' ? key : null, envelope: body },
        { responseLimitMs: dispatch.responseLimitMs },
        dispatch.sleep,
      );
      return { status: r.status, recorded: r.body };
    },
    async deploy({ params, body }) {
      return replyWith(await reportDeployStage(ctx, params.run!, params.stage!, body));
    },
  };
}

/** The QA routes: the work of a caller, verdicts and waivers, plan executions and their leases. */
function qaHandlers(ctx: DeliveryContext): JsonHandlers<QaRouteName> {
  return {
    async renewExecution({ params, body }) {
      return replyWith(await renewExecution(ctx, params.run!, params.execution!, body.lease_seconds));
    },
    async endExecution({ params }) {
      return replyWith(await endExecution(ctx, params.run!, params.execution!));
    },
    async qaWork({ params, query, actor }) {
      return replyWith(await qaWork(ctx, actor, { runId: params.run!, stage: params.stage! }, query));
    },
    async verdict({ params, body, actor }) {
      const recorded = await recordQaVerdict(ctx, actor, { runId: params.run!, stage: params.stage! }, body);
      // A verdict callback settles what it can, unless a live deployment-stage execution defers it (DX05).
      if (recorded.ok) await settleAfter(ctx, params.run!, params.stage!, recorded.value.subject);
      return replyWith(recorded, 201);
    },
    async startExecution({ params, body, headers }) {
      const key = headers['idempotency-key'];
      if (key !== undefined && (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key)))
        return {
          refusal: makeRefusal('validation_failed', { detail: 'Idempotency-Key: 1-100 letters, digits, _ . : or -' }),
        };
      return replyWith(await startExecution(ctx, { runId: params.run!, stage: params.stage! }, body, key ?? null), 201);
    },
    async waive({ params, body, actor }) {
      return replyWith(await waiveQaCase(ctx, actor, { runId: params.run!, stage: params.stage! }, body), 201);
    },
  };
}

export function deliveryHandlers(ctx: DeliveryContext, dispatch: DispatchOptions): JsonHandlers<DeliveryRouteName> {
  return { ...runHandlers(ctx), ...stageHandlers(ctx, dispatch), ...qaHandlers(ctx) };
}
