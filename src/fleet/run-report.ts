import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { makeRefusal, type Refusal } from '../codes.js';
import type { OidcVerifier } from '../http/oidc.js';
import { formatActionsRef, parseActionsRef } from '../launcher/actions.js';
import type { Run } from '../store/runs.js';
import type { FleetContext } from './context.js';
import { hashSecret } from './launch.js';
import { repoRefOf } from './repo-state.js';

// A run's report of its result: `POST /yoke/api/runs/:id/result`.

export const SUMMARY_LIMIT = 20_000;

export const RunResult = z
  .object({
    outcome: z.enum(['success', 'failure']),
    verdict: z.enum(['accept', 'reject']).optional(),
    summary: z.string().max(SUMMARY_LIMIT, `summary is limited to ${SUMMARY_LIMIT} characters`).optional(),
    /** What the run cost, as its agent counted it. */
    cost: z
      .object({
        usd: z.number().min(0).max(100_000),
        input_tokens: z.number().int().min(0),
        output_tokens: z.number().int().min(0),
      })
      .strict()
      .optional(),
  })
  .strict();
export type RunResult = z.infer<typeof RunResult>;

export type ReportAnswer = { ok: true; run: Run } | { ok: false; refusal: Refusal };

const fail = (...a: Parameters<typeof makeRefusal>): ReportAnswer => ({ ok: false, refusal: makeRefusal(...a) });

/**
 * TR03: a report is bound to its run. With the command launcher, the per-run
 * secret. With Actions, an OIDC token from exactly the workflow run yoke
 * dispatched: resolved now if the reaper has not bound it yet, and then the
 * token's repository id, workflow file and ref, event and workflow run id
 * must all be that run's.
 */
async function authenticateRun(ctx: FleetContext, run: Run, bearer: string | null, auth: RunAuth): Promise<Refusal | null> {
  const { oidc, audience } = auth;
  if (run.secretHash) {
    const given = Buffer.from(hashSecret(bearer ?? ''), 'hex');
    const want = Buffer.from(run.secretHash, 'hex');
    return given.length === want.length && timingSafeEqual(given, want) ? null : makeRefusal('run_secret_invalid', { run: run.id });
  }
  const refuse = (detail: string) => makeRefusal('run_token_invalid', { detail, audience });
  if (!oidc || !bearer) return refuse('no OIDC token was sent');
  const res = await oidc.verify(bearer);
  if (!res.ok) return refuse(res.detail);
  const claims = res.claims;
  const dispatched = parseActionsRef(run.launcherRef);
  if (!dispatched) return refuse(`run ${run.id} was not dispatched as a workflow run, so no OIDC token can report for it`);
  if (claims.repository?.toLowerCase() !== run.repo.toLowerCase()) return refuse(`the token is for ${claims.repository ?? 'no repository'}, not ${run.repo}`);
  const repo = repoRefOf(ctx.store, run.repo);
  if (!repo) return refuse(`${run.repo} is not known to yoke`);
  let id = dispatched.id;
  if (id === null) {
    // Not bound yet: find the dispatched workflow run now, never wave the token through.
    const found = await ctx.forge.findWorkflowRun(repo, dispatched.workflow, run.id, run.launchedAt);
    if (!found) return refuse(`the ${dispatched.workflow} run yoke dispatched for ${run.id} is not listed yet; report again in a moment`);
    id = found.id;
    ctx.store.runs.setLauncherRef(run.id, formatActionsRef({ ...dispatched, id }));
  }
  if (claims.run_id !== String(id)) return refuse(`the token is from workflow run ${claims.run_id ?? 'none'}, not ${id}`);
  const wfRun = await ctx.forge.getWorkflowRun(repo, id);
  if (!wfRun) return refuse(`workflow run ${id} is gone`);
  if (wfRun.repositoryId === null || claims.repository_id !== String(wfRun.repositoryId)) {
    return refuse(`the token is for repository id ${claims.repository_id ?? 'none'}, not ${wfRun.repositoryId ?? 'unknown'}`);
  }
  if (claims.event_name !== 'workflow_dispatch') return refuse(`the token is from a ${claims.event_name ?? 'unknown'} event, not workflow_dispatch`);
  if (dispatched.ref === null) return refuse(`yoke did not keep the ref it dispatched run ${run.id} on`);
  const expected = `${run.repo}/.github/workflows/${dispatched.workflow}@refs/heads/${dispatched.ref}`;
  if (claims.workflow_ref?.toLowerCase() !== expected.toLowerCase()) return refuse(`the token is from ${claims.workflow_ref ?? 'no workflow'}, not ${expected}`);
  return null;
}

export interface RunReport {
  runId: string;
  bearer: string | null;
  body: unknown;
}

export interface RunAuth {
  oidc: OidcVerifier | null;
  audience: string;
}

export async function reportRunResult(ctx: FleetContext, auth: RunAuth, { runId, bearer, body }: RunReport): Promise<ReportAnswer> {
  const { store } = ctx;
  const run = store.runs.get(runId);
  if (!run) return fail('run_unknown', { run: runId });
  const denied = await authenticateRun(ctx, run, bearer, auth);
  if (denied) return { ok: false, refusal: denied };
  if (run.status !== 'live') return fail('run_not_live', { run: run.id, outcome: run.outcome ?? 'ended' });
  if (run.reportedOutcome) return fail('run_already_reported', { run: run.id });
  const parsed = RunResult.safeParse(body);
  if (!parsed.success) {
    return fail('validation_failed', { detail: parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ') });
  }
  const r = parsed.data;
  if (run.kind === 'lander' && r.outcome === 'success' && !r.verdict) return fail('verdict_required');
  if (run.kind !== 'lander' && r.verdict) return fail('validation_failed', { detail: `verdict: only a lander reports a verdict; this is a ${run.kind} run` });
  const cost = r.cost ? { usd: r.cost.usd, inputTokens: r.cost.input_tokens, outputTokens: r.cost.output_tokens } : null;
  const report = { outcome: r.outcome, verdict: r.outcome === 'success' ? (r.verdict ?? null) : null, summary: r.summary ?? null, cost };
  if (!store.runs.recordReport(run.id, report, ctx.clock.now())) {
    // The reaper ended it (or another report landed) while this one was checked.
    const now = store.runs.get(run.id)!;
    return now.status !== 'live' ? fail('run_not_live', { run: run.id, outcome: now.outcome ?? 'ended' }) : fail('run_already_reported', { run: run.id });
  }
  const updated = store.runs.get(run.id)!;
  // Posted under the pass lock so a pass posting the same verdict cannot race it.
  if (updated.verdict) ctx.postVerdicts();
  return { ok: true, run: updated };
}

/**
 * TR02 for the command launcher: a lander's verdict is the exit code of the
 * validation it ran (0 accept, 1 reject), read by yoke itself, so the code
 * being judged never holds a secret to report with. Any other exit is no
 * verdict: the reaper ends the run as a failure.
 */
export function recordLanderExit(ctx: Pick<FleetContext, 'store' | 'log' | 'postVerdicts' | 'clock'>, runId: string, exit: { code: number | null; outputTail: string }): boolean {
  const run = ctx.store.runs.get(runId);
  if (!run || run.kind !== 'lander' || (exit.code !== 0 && exit.code !== 1)) return false;
  const verdict = exit.code === 0 ? 'accept' : 'reject';
  const tail = exit.outputTail.trim();
  const summary = `The validation exited with code ${exit.code}.${tail ? `\n\n\`\`\`\n${tail}\n\`\`\`` : ''}`;
  if (!ctx.store.runs.recordReport(runId, { outcome: 'success', verdict, summary }, ctx.clock.now())) return false;
  ctx.log.info({ run: runId, verdict }, 'lander verdict from its exit code');
  ctx.postVerdicts();
  return true;
}
