import { ok, refuse, type Result } from '../../kernel/result.js';
import type { RepoConfig } from '../../config/repo-config.js';
import type { RepoName, RepoRef } from '../../forge/types.js';
import {
  autoLoopSet,
  fixQueued,
  landQueued,
  repoReset,
  repoStatusReport,
  startConfirmed,
  startQueued,
} from '../notices/messages.js';
import type { NewAsk } from '../../store/fleet/asks.js';
import { effectiveCap } from '../cap.js';
import { issueSubject, pullSubject } from '../../kernel/ids.js';
import type { FleetContext } from '../context.js';
import type { Refusal } from '../../kernel/codes/table.js';
import { openingLedger } from '../money/ledger.js';
import { queuedWait, type QueuedWork } from '../money/queued-wait.js';
import { autoLoopOn, isPaused, repoRefOf } from '../repo-state.js';

// The actions people take, shared by comment commands and the HTTP API.
// Each answers with data: what happened, or a refusal with its recovery.

async function optedIn(
  ctx: FleetContext,
  name: RepoName,
): Promise<{ repo: RepoRef; config: RepoConfig } | { refusal: Result<string> }> {
  const repo = await repoRefOf(ctx.store, name);
  // A name yoke has never seen listed: the app cannot see it, as `yoke plan` says too.
  if (!repo) return { refusal: refuse('repo_not_installed', { repo: name }) };
  const cfg = await ctx.forge.readConfig(repo, { maxAgeMs: ctx.policy.configRefreshMs });
  if (cfg.state === 'absent') return { refusal: refuse('repo_not_opted_in', { repo: name }) };
  if (cfg.state === 'invalid') return { refusal: refuse('repo_disabled', { repo: name, detail: cfg.reason }) };
  return { repo, config: cfg.config };
}

/** A manual AFK start: recorded as a request the next pass launches (SP01), refused while paused (SP15). */
export async function requestStart(
  ctx: FleetContext,
  name: RepoName,
  issue: number,
  /** Who asks; TR33: a writer's instructions for the run (`/yoke start <instructions>`), and the comment they came in. */
  ask: { by: string; instructions?: { text: string; commentId: number } | null },
): Promise<Result<string>> {
  const { by, instructions = null } = ask;
  const got = await optedIn(ctx, name);
  if ('refusal' in got) return got.refusal;
  const { store, forge, clock } = ctx;
  if (isPaused((await store.repos.get(name))!))
    return refuse('repo_paused', { repo: name, threshold: ctx.policy.pauseThreshold });
  const found = await forge.getIssue(got.repo, issue);
  if (!found || found.state !== 'open' || found.isPull) return refuse('issue_not_found', { repo: name, number: issue });
  const live = await store.runs.liveForSubject(name, issueSubject(issue));
  if (live) return refuse('subject_busy', { repo: name, subject: `#${issue}`, run: live.id });
  // TR24: a writer's start approves the issue as it reads now, labelled or not; nothing else re-approves it.
  await store.afkLabels.record({
    repo: name,
    issueNumber: issue,
    bodyDigest: found.digest,
    labelledBy: by,
    recordedAt: clock.now(),
  });
  // An issue whose claim PR is open is confirmed, not started again: the PR's fix runs work from this text.
  const claim = await openClaimOf(ctx, got.repo, issue);
  if (claim !== null) return ok(startConfirmed(issue, claim));
  if (instructions)
    await store.asks.record(commandAsk({ repo: name, kind: 'start', number: issue, by }, instructions, clock.now()));
  // Decided before the request is recorded and a pass is asked for, so the run it launches is not its own wait.
  const work = {
    repo: name,
    kind: 'afk_manual' as const,
    issue: { number: issue, graph: found.graph },
    config: got.config,
  };
  const wait = await waitNow(ctx, work);
  await store.requests.add(name, 'start', issue, by, clock.now());
  ctx.wake(name);
  return ok(startQueued(issue, instructions !== null, wait));
}

/** The wait queued work meets now, as the pass would decide it (one wait, said the same everywhere). */
async function waitNow(ctx: FleetContext, work: QueuedWork): Promise<Refusal | null> {
  const now = ctx.clock.now();
  return queuedWait(work, {
    policy: ctx.policy,
    liveCount: await ctx.store.runs.countLive(),
    ledger: await openingLedger(ctx.store, now),
    now,
  });
}

/** The open claim PR of an issue, as yoke recorded its claims and GitHub says it is open now, or null. */
async function openClaimOf(ctx: FleetContext, repo: RepoRef, issue: number): Promise<number | null> {
  for (const c of (await ctx.store.claims.listForRepo(repo.fullName)).filter((c) => c.issueNumber === issue))
    if ((await ctx.forge.getIssue(repo, c.prNumber))?.state === 'open') return c.prNumber;
  return null;
}

export async function requestLand(ctx: FleetContext, name: RepoName, pr: number, by: string): Promise<Result<string>> {
  const got = await optedIn(ctx, name);
  if ('refusal' in got) return got.refusal;
  const { store, forge, clock } = ctx;
  const found = await forge.getIssue(got.repo, pr);
  if (!found || found.state !== 'open' || !found.isPull) return refuse('pull_not_found', { repo: name, number: pr });
  // TR04: only a claim yoke recorded can be landed; a request for anything else would never be served.
  if (!(await store.claims.forPull(name, pr))) return refuse('pull_not_claim', { repo: name, number: pr });
  const live = await store.runs.liveForSubject(name, pullSubject(pr));
  if (live) return refuse('subject_busy', { repo: name, subject: `#${pr}`, run: live.id });
  const wait = await waitNow(ctx, { repo: name, kind: 'lander', config: got.config });
  await store.requests.add(name, 'land', pr, by, clock.now());
  ctx.wake(name);
  return ok(landQueued(pr, wait));
}

export async function setAutoLoop(ctx: FleetContext, name: RepoName, on: boolean): Promise<Result<string>> {
  const got = await optedIn(ctx, name);
  if ('refusal' in got) return got.refusal;
  await ctx.store.repos.setAutoLoop(name, on, ctx.clock.now());
  if (on) ctx.wake(name);
  return ok(autoLoopSet(name, on, isPaused((await ctx.store.repos.get(name))!)));
}

/** SP15: the only way out of a pause. */
export async function resetRepo(ctx: FleetContext, name: RepoName): Promise<Result<string>> {
  const got = await optedIn(ctx, name);
  if ('refusal' in got) return got.refusal;
  const before = (await ctx.store.repos.get(name))!;
  await ctx.store.repos.unpause(name, ctx.clock.now());
  ctx.wake(name);
  return ok(repoReset(name, before.consecutiveFailures, isPaused(before)));
}

export async function repoStatus(
  ctx: FleetContext,
  name: RepoName,
  style: 'markdown' | 'plain' = 'markdown',
): Promise<Result<string>> {
  const got = await optedIn(ctx, name);
  if ('refusal' in got) return got.refusal;
  const { store, policy } = ctx;
  const state = (await store.repos.get(name))!;
  const live = await store.runs.listLive();
  return ok(
    repoStatusReport(
      {
        repo: name,
        autoLoop: autoLoopOn(state, got.config),
        pausedSince: state.pausedSince,
        failures: state.consecutiveFailures,
        pauseThreshold: policy.pauseThreshold,
        cap: effectiveCap(policy, name),
        liveFleetWide: live.length,
        autoland: got.config.autoland.enabled,
        fixForward: got.config.fix_forward.enabled,
        live: live
          .filter((r) => r.repo === name)
          .map((r) => ({ id: r.id, kind: r.kind, subject: r.subject, deadline: r.budgetDeadline })),
      },
      style,
    ),
  );
}

const commandAsk = (
  { repo, kind, number, by }: { repo: RepoName; kind: 'fix' | 'start'; number: number; by: string },
  i: { text: string; commentId: number },
  at: number,
): NewAsk => ({
  repo,
  kind,
  number,
  source: 'command',
  sourceId: i.commentId,
  author: by,
  headSha: null,
  text: i.text,
  comments: [],
  askedAt: at,
  declined: null,
});

/**
 * TR33: `/yoke fix <what to change>` on a claim PR: an ask the next fix run carries. A run live on the PR
 * does not refuse it: its instructions wait for the fix after that run, with any review that comes meanwhile.
 */
export async function requestFix(
  ctx: FleetContext,
  name: RepoName,
  pr: number,
  { by, instructions }: { by: string; instructions: { text: string; commentId: number } },
): Promise<Result<string>> {
  const got = await optedIn(ctx, name);
  if ('refusal' in got) return got.refusal;
  const { store, forge, clock } = ctx;
  if (!instructions.text.trim()) return refuse('fix_text_missing', { number: pr });
  const found = await forge.getIssue(got.repo, pr);
  if (!found || found.state !== 'open' || !found.isPull) return refuse('fix_not_on_claim', { repo: name, number: pr });
  if (!(await store.claims.forPull(name, pr))) return refuse('fix_not_on_claim', { repo: name, number: pr });
  const fixes = (await store.runs.listForRepo(name)).filter((r) => r.kind === 'fix' && r.prNumber === pr);
  const max = got.config.fix_forward.max_attempts;
  if (fixes.length >= max && !fixes.some((r) => r.status === 'live'))
    return refuse('fix_asks_exhausted', { number: pr, attempts: fixes.length, by: `@${by}` });
  const live = await store.runs.liveForSubject(name, pullSubject(pr));
  const wait = live ? null : await waitNow(ctx, { repo: name, kind: 'fix', config: got.config });
  await store.asks.record(commandAsk({ repo: name, kind: 'fix', number: pr, by }, instructions, clock.now()));
  ctx.wake(name);
  return ok(fixQueued(pr, live ? live.id : null, wait));
}
