import { redactSecrets } from '../kernel/redact.js';
import { issuesText } from '../kernel/issues-text.js';
import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { ok, refuse, refused, type Result } from '../kernel/result.js';
import { makeRefusal, type Refusal } from '../kernel/codes/table.js';
import { claimBranch, claimPullBody, claimPullTitle } from '../fleet/messages.js';
import { collapsedOutput, tailOf } from '../agent/output.js';
import type { OidcVerifier } from './oidc.js';
import { formatActionsRef, parseActionsRef } from '../launcher/actions.js';
import type { Run } from '../store/runs.js';
import type { FleetContext } from '../fleet/context.js';
import { hashSecret } from '../fleet/launch.js';
import { repoRefOf } from '../fleet/repo-state.js';

// A run's report of its result: `POST /yoke/api/runs/:id/result`.

export const SUMMARY_LIMIT = 20_000;

export const RunResult = z
  .object({
    outcome: z.enum(['success', 'failure']),
    verdict: z.enum(['accept', 'reject']).optional(),
    /** The commit the lander judged: a verdict counts only for the head yoke dispatched it on. */
    head_sha: z
      .string()
      .regex(/^[0-9a-f]{40}$/, 'head_sha is the 40-hex commit the lander validated')
      .optional(),
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

/**
 * TR03: a report is bound to its run. With the command launcher, the per-run
 * secret. With Actions, an OIDC token from exactly the workflow run yoke
 * dispatched: resolved now if the reaper has not bound it yet, and then the
 * token's repository id, workflow file and ref, event and workflow run id
 * must all be that run's.
 */
async function authenticateRun(
  ctx: FleetContext,
  run: Run,
  bearer: string | null,
  auth: RunAuth,
): Promise<Refusal | null> {
  const { oidc, audience } = auth;
  if (run.secretHash) {
    const given = Buffer.from(hashSecret(bearer ?? ''), 'hex');
    const want = Buffer.from(run.secretHash, 'hex');
    return given.length === want.length && timingSafeEqual(given, want)
      ? null
      : makeRefusal('run_secret_invalid', { run: run.id });
  }
  const invalid = (detail: string) => makeRefusal('run_token_invalid', { detail, audience });
  if (!oidc || !bearer) return invalid('no OIDC token was sent');
  const res = await oidc.verify(bearer);
  if (!res.ok) return invalid(res.detail);
  const claims = res.claims;
  const dispatched = parseActionsRef(run.launcherRef);
  if (!dispatched)
    return invalid(`run ${run.id} was not dispatched as a workflow run, so no OIDC token can report for it`);
  if (claims.repository?.toLowerCase() !== run.repo.toLowerCase())
    return invalid(`the token is for ${claims.repository ?? 'no repository'}, not ${run.repo}`);
  const repo = await repoRefOf(ctx.store, run.repo);
  if (!repo) return invalid(`${run.repo} is not known to yoke`);
  let id = dispatched.id;
  if (id === null) {
    // Not bound yet: find the dispatched workflow run now, never wave the token through.
    const found = await ctx.forge.findWorkflowRun(repo, dispatched.workflow, run.id, run.launchedAt);
    if (found.kind === 'none')
      return invalid(
        `the ${dispatched.workflow} run yoke dispatched for ${run.id} is not listed yet; report again in a moment`,
      );
    if (found.kind === 'many')
      return invalid(
        `${found.ids.length} ${dispatched.workflow} runs that yoke dispatched carry the name ${run.id} (${found.ids.join(', ')}); yoke binds none of them`,
      );
    id = found.run.id;
    await ctx.store.runs.setLauncherRef(run.id, formatActionsRef({ ...dispatched, id }));
  }
  if (claims.run_id !== String(id))
    return invalid(`the token is from workflow run ${claims.run_id ?? 'none'}, not ${id}`);
  const wfRun = await ctx.forge.getWorkflowRun(repo, id);
  if (!wfRun) return invalid(`workflow run ${id} is gone`);
  // Only a run yoke's app started, and that nobody re-ran, reports: a writer's own dispatch or re-run never does.
  const bot = await ctx.forge.botLogin();
  if (wfRun.actor !== bot || (wfRun.triggeringActor ?? wfRun.actor) !== bot) {
    return invalid(
      `workflow run ${id} was ${wfRun.triggeringActor && wfRun.triggeringActor !== wfRun.actor ? `re-run by ${wfRun.triggeringActor}` : `started by ${wfRun.actor ?? 'someone unknown'}`}, not by ${bot}`,
    );
  }
  if (claims.actor !== bot)
    return invalid(`the token is from a run started by ${claims.actor ?? 'someone unknown'}, not by ${bot}`);
  if (wfRun.repositoryId === null || claims.repository_id !== String(wfRun.repositoryId)) {
    return invalid(
      `the token is for repository id ${claims.repository_id ?? 'none'}, not ${wfRun.repositoryId ?? 'unknown'}`,
    );
  }
  if (claims.event_name !== 'workflow_dispatch')
    return invalid(`the token is from a ${claims.event_name ?? 'unknown'} event, not workflow_dispatch`);
  if (dispatched.ref === null) return invalid(`yoke did not keep the ref it dispatched run ${run.id} on`);
  const expected = `${run.repo}/.github/workflows/${dispatched.workflow}@refs/heads/${dispatched.ref}`;
  if (claims.workflow_ref?.toLowerCase() !== expected.toLowerCase())
    return invalid(`the token is from ${claims.workflow_ref ?? 'no workflow'}, not ${expected}`);
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

export async function reportRunResult(
  ctx: FleetContext,
  auth: RunAuth,
  { runId, bearer, body }: RunReport,
): Promise<Result<Run>> {
  const { store } = ctx;
  const run = await store.runs.get(runId);
  if (!run) return refuse('run_unknown', { run: runId });
  const denied = await authenticateRun(ctx, run, bearer, auth);
  if (denied) return refused(denied);
  if (run.status !== 'live') return refuse('run_not_live', { run: run.id, outcome: run.outcome ?? 'ended' });
  if (run.reportedOutcome) return refuse('run_already_reported', { run: run.id });
  const parsed = RunResult.safeParse(body);
  if (!parsed.success) {
    return refuse('validation_failed', {
      detail: issuesText(parsed.error, 'body'),
    });
  }
  const r = parsed.data;
  if (run.kind === 'lander' && r.outcome === 'success' && !r.verdict) return refuse('verdict_required');
  if (run.kind === 'lander' && r.verdict && r.head_sha?.toLowerCase() !== run.headSha?.toLowerCase()) {
    return refuse('report_head_mismatch', {
      run: run.id,
      judged: r.head_sha ?? 'no head',
      head: run.headSha ?? 'unknown',
    });
  }
  if (run.kind !== 'lander' && r.verdict)
    return refuse('validation_failed', {
      detail: `verdict: only a lander reports a verdict; this is a ${run.kind} run`,
    });
  const cost = r.cost
    ? { usd: r.cost.usd, inputTokens: r.cost.input_tokens, outputTokens: r.cost.output_tokens }
    : null;
  // A summary is published (verdict comments, check runs, the dashboard): no secret shape survives.
  const report = {
    outcome: r.outcome,
    verdict: r.outcome === 'success' ? (r.verdict ?? null) : null,
    summary: r.summary === undefined ? null : redactSecrets(r.summary),
    cost,
  };
  if (!(await store.runs.recordReport(run.id, report, ctx.clock.now()))) {
    // The reaper ended it (or another report landed) while this one was checked.
    const now = (await store.runs.get(run.id))!;
    return now.status !== 'live'
      ? refuse('run_not_live', { run: run.id, outcome: now.outcome ?? 'ended' })
      : refuse('run_already_reported', { run: run.id });
  }
  const updated = (await store.runs.get(run.id))!;
  // Posted under the pass lock so a pass posting the same verdict cannot race it.
  if (updated.verdict) ctx.postVerdicts();
  return ok(updated);
}

/**
 * TR02 for the command launcher: a lander's verdict is the exit code of the
 * validation it ran (0 accept, 1 reject), read by yoke itself, so the code
 * being judged never holds a secret to report with. Any other exit is no
 * verdict: the reaper ends the run as a failure.
 */
export async function recordLanderExit(
  ctx: Pick<FleetContext, 'store' | 'log' | 'postVerdicts' | 'clock'>,
  runId: string,
  exit: { code: number | null; outputTail: string },
): Promise<boolean> {
  const run = await ctx.store.runs.get(runId);
  if (!run || run.kind !== 'lander' || (exit.code !== 0 && exit.code !== 1)) return false;
  const verdict = exit.code === 0 ? 'accept' : 'reject';
  const tail = tailOf(redactSecrets(exit.outputTail));
  // The judged code wrote this output: an inert, collapsed block, as the Actions lander's report shows it.
  const summary = `The validation exited with code ${exit.code}.${tail ? `\n\n${collapsedOutput('The end of the validation output', tail)}` : ''}`;
  if (!(await ctx.store.runs.recordReport(runId, { outcome: 'success', verdict, summary }, ctx.clock.now())))
    return false;
  ctx.log.info({ run: runId, verdict }, 'lander verdict from its exit code');
  ctx.postVerdicts();
  return true;
}

/** A push token for one run's branch. */
export interface PushGrant {
  token: string;
  branch: string;
  expiresAt: string;
}

const ClaimBody = z
  .object({
    title: z.string().max(1000),
    summary: z.string().max(SUMMARY_LIMIT),
    base: z
      .string()
      .regex(/^[\w./-]{1,200}$/)
      .optional(),
  })
  .strict();

/** TR11: a live run that authenticates as itself (its OIDC token or run secret), whatever its kind. */
export async function authenticateLiveRun(
  ctx: FleetContext,
  auth: RunAuth,
  runId: string,
  bearer: string | null,
): Promise<Result<Run>> {
  const run = await ctx.store.runs.get(runId);
  if (!run) return refuse('run_unknown', { run: runId });
  const denied = await authenticateRun(ctx, run, bearer, auth);
  if (denied) return refused(denied);
  if (run.status !== 'live') return refuse('run_not_live', { run: run.id, outcome: run.outcome ?? 'ended' });
  return ok(run);
}

/** The run behind a request of its own (push, claim): known, authenticated as itself, live, not yet reported, AFK or fix. */
async function liveWorkRun(
  ctx: FleetContext,
  auth: RunAuth,
  runId: string,
  bearer: string | null,
): Promise<Result<Run>> {
  const live = await authenticateLiveRun(ctx, auth, runId, bearer);
  if (!live.ok) return live;
  const run = live.value;
  if (run.reportedOutcome) return refuse('run_already_reported', { run: run.id });
  if (run.kind === 'lander')
    return refuse('run_cannot_push', { run: run.id, kind: run.kind, detail: 'a lander judges a PR and never pushes' });
  return ok(run);
}

/**
 * `POST /yoke/api/runs/:id/push`: a token for the run's one push, and the
 * branch it goes to, which yoke names: `yoke/<issue>-<run id>` for an AFK
 * run, the claim PR's own branch for a fix. Pushed with an app token (not
 * GITHUB_TOKEN), the push starts the repository's own workflows.
 */
export async function grantPush(
  ctx: FleetContext,
  auth: RunAuth,
  runId: string,
  bearer: string | null,
): Promise<Result<PushGrant>> {
  const found = await liveWorkRun(ctx, auth, runId, bearer);
  if (!found.ok) return found;
  const run = found.value;
  const repo = await repoRefOf(ctx.store, run.repo);
  if (!repo)
    return refuse('run_cannot_push', { run: run.id, kind: run.kind, detail: `${run.repo} is not known to yoke` });
  let branch: string;
  if (run.kind === 'fix') {
    const pull = run.prNumber === null ? null : await ctx.forge.getPull(repo, run.prNumber);
    if (!pull || pull.state !== 'open' || !pull.headRef)
      return refuse('run_cannot_push', { run: run.id, kind: run.kind, detail: `PR #${run.prNumber} is not open` });
    if (pull.headRepo && pull.headRepo.toLowerCase() !== run.repo.toLowerCase())
      return refuse('run_cannot_push', {
        run: run.id,
        kind: run.kind,
        detail: `PR #${run.prNumber} comes from a fork`,
      });
    branch = pull.headRef;
  } else {
    if (run.issueNumber === null)
      return refuse('run_cannot_push', { run: run.id, kind: run.kind, detail: 'it has no issue' });
    branch = claimBranch(run.issueNumber, run.id);
  }
  const t = await ctx.forge.mintPushToken(repo);
  ctx.log.info({ run: run.id, branch }, 'push token granted');
  return ok({ token: t.token, branch, expiresAt: t.expiresAt });
}

/** `POST /yoke/api/runs/:id/claim`: yoke opens the AFK run's claim PR from its branch, as the app, with the closing keyword and trailer. */
export async function openClaim(
  ctx: FleetContext,
  auth: RunAuth,
  runId: string,
  bearer: string | null,
  body: unknown,
): Promise<Result<number>> {
  const found = await liveWorkRun(ctx, auth, runId, bearer);
  if (!found.ok) return found;
  const run = found.value;
  if (run.kind === 'fix' || run.issueNumber === null)
    return refuse('run_cannot_push', {
      run: run.id,
      kind: run.kind,
      detail: 'only an AFK run opens a claim PR; a fix pushes to the one it repairs',
    });
  const parsed = ClaimBody.safeParse(body);
  if (!parsed.success)
    return refuse('validation_failed', {
      detail: issuesText(parsed.error, 'body'),
    });
  const repo = await repoRefOf(ctx.store, run.repo);
  if (!repo)
    return refuse('run_cannot_push', { run: run.id, kind: run.kind, detail: `${run.repo} is not known to yoke` });
  // The branch yoke dispatched the run on (the default branch, or launcher.ref); a command run names its own.
  const base = parseActionsRef(run.launcherRef)?.ref ?? parsed.data.base ?? 'main';
  try {
    const number = await ctx.forge.openPull(repo, {
      head: claimBranch(run.issueNumber, run.id),
      base,
      title: claimPullTitle(parsed.data.title),
      body: claimPullBody(run.issueNumber, run.id, parsed.data.summary),
    });
    ctx.wake(run.repo);
    return ok(number);
  } catch (err) {
    return refuse('claim_open_failed', {
      run: run.id,
      detail: err instanceof Error ? err.message.split('\n')[0]! : String(err),
    });
  }
}
