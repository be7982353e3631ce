import { redactSecrets } from '../../kernel/redact.js';
import { issuesText } from '../../kernel/issues-text.js';
import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { ok, refuse, refused, type Result } from '../../kernel/result.js';
import { makeRefusal, type Refusal } from '../../kernel/codes/table.js';
import { claimBranch, claimPullBody, claimPullTitle } from '../../fleet/notices/messages.js';
import { recordRunResult } from '../../fleet/runs/run-results.js';
import { bindTokenToRun } from '../../fleet/runs/run-binding.js';
import { SUMMARY_LIMIT } from '../../agent/result-document.js';
import { collapsedOutput, tailOf } from '../../agent/output.js';
import type { OidcVerifier } from './oidc.js';
import { parseActionsRef } from '../../launcher/actions.js';
import type { Run } from '../../store/fleet/runs.js';
import type { FleetContext } from '../../fleet/context.js';
import { hashSecret } from '../../fleet/runs/launch.js';
import { repoRefOf } from '../../fleet/repo-state.js';
import { sameRepo } from '../../kernel/ids.js';

// A run's report of its result: `POST /yoke/api/runs/:id/result`.

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
  // TR35: reaching through GitHub, a run's results come only as its artifact: code that ran in its workflow run cannot speak for it here.
  if (auth.reach === 'github') return makeRefusal('run_reaches_through_github', { run: run.id });
  const invalid = (detail: string) => makeRefusal('run_token_invalid', { detail, audience });
  if (!oidc || !bearer) return invalid('no OIDC token was sent');
  const res = await oidc.verify(bearer);
  if (!res.ok) return invalid(res.detail);
  const bound = await bindTokenToRun(ctx, run, res.claims);
  return bound.ok ? null : invalid(bound.detail);
}

export interface RunReport {
  runId: string;
  bearer: string | null;
  body: unknown;
}

export interface RunAuth {
  oidc: OidcVerifier | null;
  audience: string;
  /** How Actions runs reach yoke (YOKE_RUNS_REACH): with `github`, never through the API. */
  reach: 'api' | 'github';
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
  return recordRunResult(ctx, run, body);
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
    if (pull.headRepo && !sameRepo(pull.headRepo, run.repo))
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
  { runId, bearer, body }: RunReport,
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
