import type { FleetContext } from '../context.js';
import { z } from 'zod';
import { issuesText } from '../../kernel/issues-text.js';
import { redactSecrets } from '../../kernel/redact.js';
import { ok, refuse, type Result } from '../../kernel/result.js';
import { claimBranch, fixBranch } from '../../kernel/branches.js';
import {
  HandedResult,
  RESULT_ARTIFACT,
  RESULT_ARTIFACT_LIMIT,
  RESULT_FILE_NAME,
  ResultDocument,
  RunResult,
  resultAudience,
  type HandedPush,
} from '../../agent/result-document.js';
import { classifyGitHubError } from '../../forge/errors.js';
import type { ArtifactView, RepoRef } from '../../forge/types.js';
import { readZip, ZipError } from '../../forge/zip.js';
import { parseActionsRef } from '../../launcher/actions.js';
import type { Run } from '../../store/fleet/runs.js';
import { claimPullBody, claimPullTitle } from '../notices/messages.js';
import { bindTokenToRun, type Bound, type TokenVerifier } from './run-binding.js';
import { sameRepo } from '../../kernel/ids.js';

// A run's result, whichever way it came: through yoke's API with the run's
// credential, or back through GitHub as an artifact of the dispatched workflow
// run (YOKE_RUNS_REACH=github). Both meet the same binding (TR03) and the same
// checks before anything is recorded; a handed-back result also carries what
// the deliver job pushed, and yoke opens the claim PR (or moves the claim PR's
// branch to a fix) as the app, so the repository's own checks run on it.

/** Checks a run's result against the run (a verdict only from a lander, for the head it was dispatched on) and records it. */
export async function recordRunResult(
  ctx: Pick<FleetContext, 'store' | 'clock' | 'postVerdicts'>,
  run: Run,
  body: unknown,
): Promise<Result<Run>> {
  const parsed = RunResult.safeParse(body);
  if (run.status !== 'live') return lateReport(ctx, run, parsed.success ? parsed.data.cost : undefined);
  if (run.reportedOutcome) return refuse('run_already_reported', { run: run.id });
  if (!parsed.success) return refuse('validation_failed', { detail: issuesText(parsed.error, 'body') });
  const r = parsed.data;
  if (run.kind === 'lander' && r.outcome === 'success' && !r.verdict) return refuse('verdict_required');
  if (run.kind === 'lander' && r.verdict && r.head_sha?.toLowerCase() !== run.headSha?.toLowerCase())
    return refuse('report_head_mismatch', {
      run: run.id,
      judged: r.head_sha ?? 'no head',
      head: run.headSha ?? 'unknown',
    });
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
  if (!(await ctx.store.runs.recordReport(run.id, report, ctx.clock.now()))) {
    // The reaper ended it (or another report landed) while this one was checked.
    const now = (await ctx.store.runs.get(run.id))!;
    return now.status !== 'live'
      ? refuse('run_not_live', { run: run.id, outcome: now.outcome ?? 'ended' })
      : refuse('run_already_reported', { run: run.id });
  }
  const updated = (await ctx.store.runs.get(run.id))!;
  // Posted under the pass lock so a pass posting the same verdict cannot race it.
  if (updated.verdict) ctx.postVerdicts();
  return ok(updated);
}

/**
 * BU02: a report that comes after its run ended (the reaper ended it first) no longer counts as its result,
 * but what it spent does: recorded against the run, when nothing else is, in place of its reservation.
 */
async function lateReport(
  ctx: Pick<FleetContext, 'store'>,
  run: Run,
  cost: z.infer<typeof RunResult>['cost'],
): Promise<Result<Run>> {
  const outcome = run.outcome ?? 'ended';
  if (cost && run.cost === null) {
    const spent = { usd: cost.usd, inputTokens: cost.input_tokens, outputTokens: cost.output_tokens };
    if (await ctx.store.spend.recordLateCost(run.id, spent))
      return refuse('run_reported_late', { run: run.id, outcome, usd: cost.usd.toFixed(2) });
  }
  return refuse('run_not_live', { run: run.id, outcome });
}

/** Runs reach yoke through GitHub (YOKE_RUNS_REACH=github): how the results they hand back are believed. */
export interface HandedResults {
  verifier: TokenVerifier;
  /** The audience runs ask their tokens for (YOKE_PUBLIC_URL); a result's token adds the result's sha256 to it. */
  audience: string;
}

/** What reading a finished run's result artifact came to. */
export type Collected =
  | { state: 'recorded' }
  /** Nothing to believe: the run ends as it would without a report, and `detail` says why. */
  | { state: 'none'; detail: string }
  /** GitHub could not be read just now: the run stays live and the next reaper tick reads again. */
  | { state: 'retry'; detail: string };

type None = { state: 'none'; detail: string };
type Retry = { state: 'retry'; detail: string };
const none = (detail: string): None => ({ state: 'none', detail });
const retry = (detail: string): Retry => ({ state: 'retry', detail });
/** A token issued this long before yoke recorded the launch, or after the workflow run last changed, binds nothing. */
const ISSUE_SLACK_MS = 60_000;

function faultOrNone(err: unknown, what: string): None | Retry {
  const e = classifyGitHubError(err);
  return e.kind === 'fault' ? retry(`${what}: ${e.message}`) : none(`${what}: ${e.message}`);
}

/**
 * Reads the result a finished workflow run left as its `yoke-result` artifact,
 * and records it if, and only if, its token verifies, binds to exactly this
 * run (TR03) and was issued while the run was live, and the result names this
 * run. A fault reading GitHub is a retry, never a failure.
 */
export async function collectHandedResult(
  ctx: FleetContext & HandedResults,
  run: Run,
  repo: RepoRef,
  workflowRunId: number,
): Promise<Collected> {
  let artifacts;
  try {
    artifacts = await ctx.forge.listRunArtifacts(repo, workflowRunId);
  } catch (err) {
    return faultOrNone(err, `its artifacts could not be listed`);
  }
  // TR35: the report job names its artifact at random (`yoke-result-<hex>`), so code that ran earlier in the
  // workflow run cannot take the name first; any of them may be the result, and only one whose token binds is.
  const candidates = artifacts.filter((a) => isResultArtifact(a.name)).slice(0, RESULT_ARTIFACTS_READ);
  if (candidates.length === 0) return none(`workflow run ${workflowRunId} left no ${RESULT_ARTIFACT} artifact`);
  let handed: HandedResult | null = null;
  const refused: string[] = [];
  for (const found of candidates) {
    const read = await readResultArtifact(ctx, { run, repo }, workflowRunId, found);
    if (read.state === 'retry') return read;
    if (read.state === 'none') refused.push(read.detail);
    else if (read.state === 'read') {
      handed = read.handed;
      break;
    }
  }
  if (!handed) return none(refused.join('; '));
  const { run_id: _id, push, ...result } = handed;
  if (run.status !== 'live') return lateResult(ctx, run, workflowRunId, result);
  let body: unknown = result;
  if (result.outcome === 'success' && run.kind !== 'lander') {
    const delivered = await deliverPush(ctx, { run, repo }, push, result.summary ?? '');
    if (delivered.state === 'retry') return delivered;
    body =
      delivered.state === 'failed'
        ? {
            outcome: 'failure',
            summary: `Delivery failed: ${delivered.detail}`,
            ...(result.cost ? { cost: result.cost } : {}),
          }
        : { ...result, summary: `${delivered.said}${result.summary ?? ''}` };
  }
  const recorded = await recordRunResult(ctx, run, body);
  if (!recorded.ok) {
    // Already reported or ended: nothing more to read. Any other refusal is the result's own fault.
    if (recorded.refusal.code === 'run_already_reported' || recorded.refusal.code === 'run_not_live')
      return { state: 'recorded' };
    return none(`its result is refused: ${recorded.refusal.message}`);
  }
  ctx.log.info(
    { run: run.id, workflowRun: workflowRunId, outcome: recorded.value.reportedOutcome },
    'read the result a run handed back',
  );
  return { state: 'recorded' };
}

/** BU02: a result of a run the reaper ended first counts for what it spent, and nothing else: an ended run delivers nothing. */
async function lateResult(ctx: FleetContext, run: Run, workflowRun: number, r: Pick<HandedResult, 'outcome' | 'cost'>) {
  const late = await recordRunResult(ctx, run, { outcome: r.outcome, ...(r.cost ? { cost: r.cost } : {}) });
  if (!late.ok && late.refusal.code === 'run_reported_late')
    ctx.log.info({ run: run.id, workflowRun }, late.refusal.message);
  return { state: 'recorded' } as const;
}

/** How many result artifacts of one workflow run yoke reads, at most, looking for the one whose token binds. */
const RESULT_ARTIFACTS_READ = 8;

/** A result artifact's name: the fixed one, or the report job's random one. */
export const isResultArtifact = (name: string): boolean =>
  name === RESULT_ARTIFACT || /^yoke-result-[0-9a-f]{32}$/.test(name);

/** One artifact's result, if its token verifies, binds to exactly this run and was issued while it was live. */
async function readResultArtifact(
  ctx: FleetContext & HandedResults,
  { run, repo }: { run: Run; repo: RepoRef },
  workflowRunId: number,
  found: ArtifactView,
): Promise<None | Retry | { state: 'read'; handed: HandedResult }> {
  if (found.expired) return none(`its ${RESULT_ARTIFACT} artifact expired before yoke read it`);
  if (found.sizeInBytes > RESULT_ARTIFACT_LIMIT)
    return none(`its ${RESULT_ARTIFACT} artifact is ${found.sizeInBytes} bytes, more than yoke reads`);
  let zip: Uint8Array | null;
  try {
    zip = await ctx.forge.downloadArtifact(repo, found.id);
  } catch (err) {
    return faultOrNone(err, `its ${RESULT_ARTIFACT} artifact could not be downloaded`);
  }
  if (!zip) return none(`its ${RESULT_ARTIFACT} artifact is gone`);
  let text: string | undefined;
  try {
    text = readZip(zip, RESULT_ARTIFACT_LIMIT).get(RESULT_FILE_NAME)?.toString('utf8');
  } catch (err) {
    return none(
      `its ${RESULT_ARTIFACT} artifact is not a readable zip (${err instanceof ZipError ? err.message : String(err)})`,
    );
  }
  if (text === undefined) return none(`its ${RESULT_ARTIFACT} artifact holds no ${RESULT_FILE_NAME}`);
  const doc = parseJson(text, ResultDocument);
  if (!doc.ok) return none(`its ${RESULT_FILE_NAME} is not a result document (${doc.detail})`);
  const verified = await ctx.verifier.verify(doc.value.token, {
    audience: resultAudience(ctx.audience, doc.value.result),
    asIssued: true,
  });
  if (!verified.ok)
    return verified.fault
      ? retry(`its token could not be checked: ${verified.detail}`)
      : none(`its token is refused: ${verified.detail}`);
  let bound: Bound;
  try {
    bound = await bindTokenToRun(ctx, run, verified.claims);
  } catch (err) {
    return faultOrNone(err, 'its workflow run could not be read');
  }
  if (!bound.ok) return none(`its token is refused: ${bound.detail}`);
  const issued = (verified.claims.iat ?? 0) * 1000;
  const last = bound.workflowRun.updatedAt ?? ctx.clock.now();
  if (issued < run.launchedAt - ISSUE_SLACK_MS || issued > last + ISSUE_SLACK_MS)
    return none(
      `its token was issued at ${new Date(issued).toISOString()}, when workflow run ${workflowRunId} was not live`,
    );
  const handed = parseJson(doc.value.result, HandedResult);
  if (!handed.ok) return none(`its result is refused (${handed.detail})`);
  if (handed.value.run_id !== run.id) return none(`its result is for run ${handed.value.run_id}, not ${run.id}`);
  return { state: 'read', handed: handed.value };
}

type Delivered =
  { state: 'done'; said: string } | { state: 'failed'; detail: string } | { state: 'retry'; detail: string };

/**
 * What the deliver job pushed, taken the rest of the way as the app: an AFK
 * run's claim PR opened from its branch, or a fix moved onto the claim PR's
 * branch (fast forward only). A push that is not where the result says is refused.
 */
async function deliverPush(
  ctx: FleetContext & HandedResults,
  { run, repo }: { run: Run; repo: RepoRef },
  push: HandedPush | undefined,
  summary: string,
): Promise<Delivered> {
  const failed = (detail: string): Delivered => ({ state: 'failed', detail });
  if (!push) return failed('the result says success but names no push');
  const want =
    run.kind === 'fix' ? fixBranch(run.id) : run.issueNumber === null ? null : claimBranch(run.issueNumber, run.id);
  if (push.branch !== want) return failed(`the result names branch ${push.branch}, not ${want ?? 'one of this run'}`);
  try {
    const head = await ctx.forge.resolveCommit(repo, push.branch);
    if (run.kind === 'fix') {
      const done = await deliverFix(ctx, { run, repo }, push, head);
      // Whatever became of it, the fix's own branch has served (a commit moved onto the PR stays there).
      await ctx.forge.deleteBranch(repo, push.branch);
      if (done.state === 'done') ctx.wake(run.repo);
      return done;
    }
    if (head !== push.commit)
      return failed(`${push.branch} is at ${head?.slice(0, 7) ?? 'nothing'}, not ${push.commit.slice(0, 7)}`);
    const base = parseActionsRef(run.launcherRef)?.ref ?? 'main';
    try {
      const number = await ctx.forge.openPull(repo, {
        head: push.branch,
        base,
        title: claimPullTitle(push.title ?? `yoke: ${run.issueNumber}`),
        body: claimPullBody(run.issueNumber!, run.id, summary),
      });
      ctx.wake(run.repo);
      return { state: 'done', said: `Opened #${number}. ` };
    } catch (err) {
      const e = classifyGitHubError(err);
      if (e.kind === 'fault') throw err;
      // Opened before a crash, on an earlier read: it stands.
      if (/already exists/i.test(e.message))
        return { state: 'done', said: `The claim PR from ${push.branch} is open. ` };
      return failed(`the claim PR could not be opened (${e.message.split('\n')[0]})`);
    }
  } catch (err) {
    return { state: 'retry', detail: `GitHub could not be read or written: ${classifyGitHubError(err).message}` };
  }
}

/** A fix: onto the claim PR's branch, fast forward from the head it was dispatched on, as the app. */
async function deliverFix(
  ctx: FleetContext & HandedResults,
  { run, repo }: { run: Run; repo: RepoRef },
  push: HandedPush,
  head: string | null,
): Promise<Delivered> {
  const failed = (detail: string): Delivered => ({ state: 'failed', detail });
  if (push.base !== run.headSha)
    return failed(
      `the fix was made on ${push.base.slice(0, 7)}, not the head yoke dispatched it on (${run.headSha?.slice(0, 7)})`,
    );
  const pull = run.prNumber === null ? null : await ctx.forge.getPull(repo, run.prNumber);
  if (!pull || pull.state !== 'open' || !pull.headRef) return failed(`PR #${run.prNumber} is not open`);
  if (pull.headRepo && !sameRepo(pull.headRepo, run.repo)) return failed(`PR #${run.prNumber} comes from a fork`);
  if (pull.headSha !== push.commit) {
    if (head !== push.commit)
      return failed(`${push.branch} is at ${head?.slice(0, 7) ?? 'nothing'}, not the fix ${push.commit.slice(0, 7)}`);
    const moved = await ctx.forge.moveBranch(repo, pull.headRef, push.commit);
    if (!moved.ok) return failed(`PR #${run.prNumber}'s branch could not be moved to the fix (${moved.message})`);
  }
  return { state: 'done', said: `Pushed ${push.commit.slice(0, 7)} to #${run.prNumber}. ` };
}

function parseJson<T>(text: string, schema: z.ZodType<T>): { ok: true; value: T } | { ok: false; detail: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, detail: 'not JSON' };
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, detail: issuesText(parsed.error, 'result') };
}
