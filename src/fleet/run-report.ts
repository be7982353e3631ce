import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { makeRefusal, type Refusal } from '../codes.js';
import type { OidcVerifier } from '../http/oidc.js';
import { parseActionsRef } from '../launcher/actions.js';
import type { Run } from '../store/runs.js';
import type { FleetContext } from './context.js';
import { hashSecret } from './launch.js';

// A run's report of its result: `POST /yoke/api/runs/:id/result`.

export const SUMMARY_LIMIT = 20_000;

export const RunResult = z
  .object({
    outcome: z.enum(['success', 'failure']),
    verdict: z.enum(['accept', 'reject']).optional(),
    summary: z.string().max(SUMMARY_LIMIT, `summary is limited to ${SUMMARY_LIMIT} characters`).optional(),
  })
  .strict();
export type RunResult = z.infer<typeof RunResult>;

export type ReportAnswer = { ok: true; run: Run } | { ok: false; refusal: Refusal };

const fail = (...a: Parameters<typeof makeRefusal>): ReportAnswer => ({ ok: false, refusal: makeRefusal(...a) });

async function authenticateRun(run: Run, bearer: string | null, oidc: OidcVerifier | null, audience: string): Promise<Refusal | null> {
  if (run.secretHash) {
    const given = Buffer.from(hashSecret(bearer ?? ''), 'hex');
    const want = Buffer.from(run.secretHash, 'hex');
    return given.length === want.length && timingSafeEqual(given, want) ? null : makeRefusal('run_secret_invalid', { run: run.id });
  }
  if (!oidc || !bearer) return makeRefusal('run_token_invalid', { detail: 'no OIDC token was sent', audience });
  const res = await oidc.verify(bearer);
  if (!res.ok) return makeRefusal('run_token_invalid', { detail: res.detail, audience });
  if (res.claims.repository?.toLowerCase() !== run.repo.toLowerCase()) {
    return makeRefusal('run_token_invalid', { detail: `the token is for ${res.claims.repository ?? 'no repository'}, not ${run.repo}`, audience });
  }
  const wf = parseActionsRef(run.launcherRef);
  if (wf?.id && res.claims.run_id !== String(wf.id)) {
    return makeRefusal('run_token_invalid', { detail: `the token is from workflow run ${res.claims.run_id}, not ${wf.id}`, audience });
  }
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
  const { oidc, audience } = auth;
  const run = store.runs.get(runId);
  if (!run) return fail('run_unknown', { run: runId });
  const denied = await authenticateRun(run, bearer, oidc, audience);
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
  store.runs.recordReport(run.id, { outcome: r.outcome, verdict: r.outcome === 'success' ? r.verdict ?? null : null, summary: r.summary ?? null });
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
export function recordLanderExit(ctx: Pick<FleetContext, 'store' | 'log' | 'postVerdicts'>, runId: string, exit: { code: number | null; outputTail: string }): boolean {
  const run = ctx.store.runs.get(runId);
  if (!run || run.kind !== 'lander' || (exit.code !== 0 && exit.code !== 1)) return false;
  const verdict = exit.code === 0 ? 'accept' : 'reject';
  const tail = exit.outputTail.trim();
  const summary = `The validation exited with code ${exit.code}.${tail ? `\n\n\`\`\`\n${tail}\n\`\`\`` : ''}`;
  if (!ctx.store.runs.recordReport(runId, { outcome: 'success', verdict, summary })) return false;
  ctx.log.info({ run: runId, verdict }, 'lander verdict from its exit code');
  ctx.postVerdicts();
  return true;
}
