import { utcDayStart, type Clock } from '../kernel/clock.js';
import type { RepoConfig } from '../config/repo-config.js';
import type { CommentView, Forge, RepoRef, RepoView } from '../forge/types.js';
import { CONTROL_LABEL } from '../forge/types.js';
import type { Launcher } from '../launcher/launcher.js';
import type { Log } from '../kernel/log.js';
import type { OpenRequest } from '../store/requests.js';
import type { Store } from '../store/store.js';
import type { Run } from '../store/runs.js';
import type { AfkLabel } from '../store/afk-labels.js';
import { executeRepoActions, planRepoActions, postPendingVerdicts, readHolds, type MergeListener } from './autoland.js';
import { syncLanderChecks, type CheckRefusals } from './check-runs.js';
import { syncRunNotices } from './run-notices.js';
import { syncDashboardIssue, viewDashboardIssue, type DashboardIssueDeps } from './dashboard-issue.js';
import { viewMaxAgeMs, type ActivitySignals, type RepoActivity } from './activity.js';
import { isAtCap, type LivenessSnapshot } from './cap.js';
import { stageRank, subjectKey, type Candidate, type Waiting } from './candidate.js';
import type { FleetPolicy } from './context.js';
import { executeHousekeeping, type Housekeeping } from './housekeeping.js';
import { launchCandidate } from './launch.js';
import { forEachLimited } from '../kernel/limit.js';
import { atCapRepos, fixCandidates, landerCandidates, newWorkCandidates, type ProducerContext } from './producers.js';
import { makeRefusal } from '../kernel/codes/table.js';
import type { Reaped } from './reaper.js';
import { readClaim } from './claims.js';
import { CLAIM_LABEL, repoReadOf, type RepoFacts } from './repo-facts.js';
import { wasAttempted } from '../store/merges.js';
import { unseenRepoState } from './repo-state.js';
import { spawnPass, type PassOutcome } from './spawn-pass.js';

// One spawn pass: read everything (gatherPass, which writes nothing), decide,
// then write: housekeeping, the locked launches, merges and notices, verdicts.

export type PassTrigger = 'scheduler' | 'reaper' | 'kick';

/** A repository the pass did not read, and why (SC03). */
export interface Deferral {
  repo: string;
  installationId: number;
  points: number;
}

/** What a full read of one repository costs, in points: the probe, the repository, issues, PRs, comments, config. */
export const READ_ESTIMATE_POINTS = 6;

/** What a dashboard issue write must leave of the minute's budget for the work that matters more. */
const DASHBOARD_RESERVE_POINTS = 1 + 5 + READ_ESTIMATE_POINTS;
const DASHBOARD_RESERVE_WRITES = 8;

export interface PassReport {
  trigger: PassTrigger;
  repos: number;
  /** Repositories left unread because the request budget was short (SC03). */
  deferred: Deferral[];
  candidates: Candidate[];
  outcomes: PassOutcome[];
  /** Everything the pass passed over, each with why: in the order the pass took it, then what it did not take up. */
  waiting: Waiting[];
  reaped: Reaped[];
  authFailures: { installationId: number; detail: string }[];
}

export interface PassDeps {
  store: Store;
  forge: Forge;
  launcher: Launcher;
  clock: Clock;
  log: Log;
  policy: FleetPolicy;
  apiUrl: string;
  webUrl: string;
  /** Installations whose check run writes wait after a refusal. */
  checkRefusals: CheckRefusals;
  newRunId: () => string;
  /** yoke's bot login and the operator-trusted logins whose markers count, lower-case. */
  trustedLogins: () => Promise<ReadonlySet<string>>;
  /** Which repository goes first within each stage this pass (SC04); the engine advances it. */
  rotation?: number;
  /** What the engine remembers of each repository's activity, for the poll tiers (SC02). */
  activity?: RepoActivity;
  /** Commands found by poll, handed the newest comments of each repo the pass read. */
  onPolledComments?: (repo: RepoRef, comments: readonly CommentView[]) => Promise<void>;
  /** Told of each claim PR the pass merged. */
  onMerged?: MergeListener;
}

export interface Gathered {
  repos: RepoRef[];
  snapshot: LivenessSnapshot;
  candidates: Candidate[];
  /** The repos whose facts were read this pass (producers read lazily), by full name. */
  facts: Map<string, Promise<RepoFacts | null>>;
  housekeeping: Housekeeping[];
  deferred: Deferral[];
  /** What the producers passed over, with why (not candidates at all). */
  waiting: Waiting[];
  authFailures: PassReport['authFailures'];
}

/** The read half of a pass: one listing, one snapshot, every producer (SP02, SP11). Writes nothing. */
export async function gatherPass(deps: PassDeps): Promise<Gathered> {
  const { store, forge, policy, log } = deps;
  const trusted = await deps.trustedLogins();
  const housekeeping: Housekeeping[] = [];

  // One repo listing, with one authentication per installation (SP02).
  const authFailures: PassReport['authFailures'] = [];
  const repos: RepoRef[] = [];
  for (const installationId of await forge.listInstallations()) {
    try {
      await forge.authenticate(installationId);
      repos.push(...(await forge.listRepos(installationId)));
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      authFailures.push({ installationId, detail });
      log.warn({ installationId, detail }, 'installation skipped for this pass');
    }
  }
  for (const repo of repos) {
    const known = await store.repos.get(repo.fullName);
    if (!known || known.installationId !== repo.installationId) {
      housekeeping.push({ type: 'ensure_repo', repo: repo.fullName, installationId: repo.installationId });
    }
  }

  // One liveness snapshot.
  const live = await store.runs.listLive();
  const snapshot: LivenessSnapshot = { liveCount: live.length, liveSubjects: new Set(live.map((r) => subjectKey(r.repo, r.subject))) };
  const requests = await store.requests.listOpen();
  const dayStart = utcDayStart(deps.clock.now());
  const spend = new Map<string, number>();
  for (const d of (await store.runs.listSpend(dayStart, dayStart + 86_400_000))) spend.set(d.repo, d.usd);
  const fleetSpend = [...spend.values()].reduce((a, b) => a + b, 0);

  const facts = new Map<string, Promise<RepoFacts | null>>();
  const readConfig = async (repo: RepoRef): Promise<RepoConfig | null> => {
    const cfg = await forge.readConfig(repo, { maxAgeMs: policy.configRefreshMs });
    return cfg.state === 'valid' ? cfg.config : null;
  };
  const factsOf = (repo: RepoRef): Promise<RepoFacts | null> => {
    let memo = facts.get(repo.fullName);
    if (!memo) {
      const signals: ActivitySignals = {
        liveRuns: live.filter((r) => r.repo === repo.fullName).length,
        openRequests: requests.filter((r) => r.repo === repo.fullName).length,
        openClaims: deps.activity?.hasOpenClaims(repo.fullName) ?? true,
        wokenAt: deps.activity?.wokenAt(repo.fullName) ?? null,
      };
      const maxViewAgeMs = viewMaxAgeMs(signals, deps.clock.now(), policy);
      const spentToday = { repo: spend.get(repo.fullName) ?? 0, fleet: fleetSpend };
      memo = readFacts(deps, repo, { snapshot, requests, trusted, housekeeping, maxViewAgeMs, spentToday }).catch((err) => {
        log.warn({ repo: repo.fullName, err: String(err) }, 'repo read failed; skipped for this pass');
        return null;
      });
      facts.set(repo.fullName, memo);
    }
    return memo;
  };
  const ctx: ProducerContext = {
    repos,
    snapshot,
    policy,
    facts: factsOf,
    wantsLanders: async (repo) =>
      requests.some((r) => r.repo === repo.fullName && r.kind === 'land') || (await readConfig(repo))?.autoland.enabled === true,
    wantsFixes: async (repo) => (await readConfig(repo))?.fix_forward.enabled === true,
  };

  // SC01: read every repository a producer may look at, concurrently and bounded; the
  // producers then decide from these reads in the listing's order, as before.
  // SC03: when an installation's budget is short, repositories with lander and merge work (an
  // open claim or a live run) are read first; the rest wait for a later pass, and say so.
  const deferred: Deferral[] = [];
  const busy = (r: RepoRef) => (deps.activity?.hasOpenClaims(r.fullName) ?? false) || live.some((l) => l.repo === r.fullName);
  const readable = repos.filter((r) => !isAtCap(snapshot, policy, r.fullName)).sort((a, b) => Number(busy(b)) - Number(busy(a)));
  await forEachLimited(readable, policy.readConcurrency, async (repo) => {
    const points = forge.remainingPoints(repo.installationId);
    if (points < READ_ESTIMATE_POINTS && !facts.has(repo.fullName)) {
      deferred.push({ repo: repo.fullName, installationId: repo.installationId, points });
      facts.set(repo.fullName, Promise.resolve(null));
      return;
    }
    await factsOf(repo);
  });

  // Producers gather from the same snapshot; none launches (SP03, SP11).
  const decided = [await landerCandidates(ctx), await fixCandidates(ctx), await newWorkCandidates(ctx)];
  const candidates = decided.flatMap((d) => d.candidates);
  const unread: Waiting[] = deferred.map((d) => ({
    repo: d.repo,
    stage: 'lander',
    subject: null,
    reason: makeRefusal('request_budget', { repo: d.repo, installation: d.installationId, points: d.points }),
  }));
  // A disabled repository's work waits, one line for all of it, with its own code and recovery (never "nothing is waiting").
  const disabled: Waiting[] = housekeeping.flatMap((h) =>
    h.type === 'disable' ? [{ repo: h.repo.fullName, stage: 'new_work' as const, subject: null, reason: makeRefusal('repo_disabled', { repo: h.repo.fullName, detail: h.reason }) }] : [],
  );
  const waiting = [...atCapRepos(ctx), ...unread, ...disabled, ...decided.flatMap((d) => d.waiting)].sort((a, b) => stageRank(a.stage) - stageRank(b.stage));
  return { repos, snapshot, candidates, facts, housekeeping, deferred, waiting, authFailures };
}

interface PassReads {
  snapshot: LivenessSnapshot;
  requests: readonly OpenRequest[];
  trusted: ReadonlySet<string>;
  /** Where this read plans the writes it found necessary. */
  housekeeping: Housekeeping[];
  /** SC02: how old a cached view may be and still stand in for a probe (0: probe now). */
  maxViewAgeMs: number;
  spentToday: RepoFacts['spentToday'];
}

/**
 * TR24's reads: the body each AFK issue had when yoke first saw its label (recorded now on first sight,
 * with who applied the label), confirmed anew by a writer's start (an afk_manual run launched since); an
 * edited one that nothing confirmed is said once to wait.
 */
async function readAfkLabels(deps: PassDeps, repo: RepoRef, view: RepoView, runs: readonly Run[], claimedIssues: readonly number[], reads: PassReads): Promise<Map<number, AfkLabel>> {
  const config = view.config.state === 'valid' ? view.config.config : null;
  const out = new Map((await deps.store.afkLabels.listForRepo(repo.fullName)).map((l) => [l.issueNumber, l]));
  if (!config) return out;
  const now = deps.clock.now();
  for (const issue of view.issues) {
    if (!issue.labels.includes(config.afk_label)) continue;
    const seen = out.get(issue.number);
    const confirmed = seen && seen.bodyDigest !== issue.bodyDigest && runs.some((r) => r.issueNumber === issue.number && r.kind === 'afk_manual' && r.launchedAt >= seen.recordedAt);
    if (!seen || confirmed) {
      const by = seen ? seen.labelledBy : ((await deps.forge.labelledBy(repo, issue.number, config.afk_label).catch(() => null))?.login ?? null);
      reads.housekeeping.push({ type: 'record_afk_label', repo: repo.fullName, issue: issue.number, digest: issue.bodyDigest, labelledBy: by });
      out.set(issue.number, { repo: repo.fullName, issueNumber: issue.number, bodyDigest: issue.bodyDigest, labelledBy: by, recordedAt: now, notifiedDigest: null });
      continue;
    }
    if (seen.bodyDigest === issue.bodyDigest || seen.notifiedDigest === issue.bodyDigest) continue;
    if (claimedIssues.includes(issue.number) || runs.some((r) => r.issueNumber === issue.number && r.status === 'live')) continue;
    reads.housekeeping.push({ type: 'notify_issue_edited', repo, issue: issue.number, digest: issue.bodyDigest, label: config.afk_label });
  }
  return out;
}

async function readFacts(deps: PassDeps, repo: RepoRef, reads: PassReads): Promise<RepoFacts | null> {
  const { store, forge, policy, clock } = deps;
  const view = await forge.readRepo(repo, { claimLabel: CLAIM_LABEL, configMaxAgeMs: policy.configRefreshMs, maxViewAgeMs: reads.maxViewAgeMs });
  deps.activity?.setOpenClaims(repo.fullName, view.claims.length > 0);
  const state = (await store.repos.get(repo.fullName)) ?? unseenRepoState(repo, clock.now());
  if (view.config.state !== 'valid') {
    if (view.config.state === 'invalid') {
      const reason = view.config.reason;
      const control = view.issues.find((i) => i.labels.includes(CONTROL_LABEL));
      reads.housekeeping.push({ type: 'disable', repo, reason, controlIssue: control?.number ?? null, notify: state.disabledNotified !== reason });
    } else if (state.disabledReason) {
      reads.housekeeping.push({ type: 'clear_disabled', repo: repo.fullName });
    }
    return null;
  }
  if (state.disabledReason) reads.housekeeping.push({ type: 'clear_disabled', repo: repo.fullName });
  const runs = await store.runs.listForRepo(repo.fullName);
  const claims = new Map((await store.claims.listForRepo(repo.fullName)).map((c) => [c.prNumber, c]));
  const afkLabels = await readAfkLabels(deps, repo, view, runs, [...claims.values()].map((c) => c.issueNumber), reads);
  const mine = reads.requests.filter((r) => r.repo === repo.fullName);
  const startableIssues = new Set<number>();
  for (const req of mine) {
    if (req.kind === 'land') {
      // A land request for a PR that is no longer an open claim PR can never be served.
      const pull = view.pulls.find((p) => p.number === req.number);
      if (!pull || !readClaim({ repo, runs, claims, view }, pull).claimed) reads.housekeeping.push({ type: 'drop_request', requestId: req.id });
      continue;
    }
    if (view.issues.some((i) => i.number === req.number)) continue;
    const issue = await forge.getIssue(repo, req.number);
    if (issue && issue.state === 'open' && !issue.isPull) startableIssues.add(req.number);
    else reads.housekeeping.push({ type: 'drop_request', requestId: req.id }); // closed since it was asked for
  }
  return {
    repo,
    state: { ...state, disabledReason: null },
    config: view.config.config,
    view,
    runs,
    claims,
    afkLabels,
    requests: mine,
    startableIssues,
    trustedLogins: reads.trusted,
    liveSubjects: reads.snapshot.liveSubjects,
    spentToday: reads.spentToday,
    fleetDailyUsd: policy.dailyUsd,
    pauseThreshold: policy.pauseThreshold,
  };
}

/**
 * The dashboard issues, last of the pass's writes: merges, landers and fixes spend the request budget
 * first (SC03). A repository whose installation is short of points (or, for a first issue, of
 * content-creating writes) keeps its body for a later pass, and at most `firstPerPass` repositories
 * get their first dashboard issue in one pass, so a new installation's are spread over passes.
 */
async function syncDashboardIssues(deps: DashboardIssueDeps, memos: Promise<RepoFacts | null>[], waiting: readonly Waiting[], opts: { webUrl: string; firstPerPass: number }): Promise<void> {
  const { store, forge, log } = deps;
  const waitingOf = new Map<string, Waiting[]>();
  for (const w of waiting) waitingOf.set(w.repo, [...(waitingOf.get(w.repo) ?? []), w]);
  let firsts = 0;
  for (const memo of memos) {
    const f = await memo;
    if (!f || !f.config.dashboard_issue || forge.remainingPoints(f.repo.installationId) < DASHBOARD_RESERVE_POINTS) continue;
    if (!(await store.dashboardIssues.get(f.repo.fullName))) {
      if (firsts >= opts.firstPerPass || forge.remainingContentWrites(f.repo.installationId) < DASHBOARD_RESERVE_WRITES) continue;
      firsts++;
    }
    const fresh = { ...f, runs: await store.runs.listForRepo(f.repo.fullName) };
    const mine = { waiting: waitingOf.get(f.repo.fullName) ?? [], owed: await store.deliveryItems.listOwed(f.repo.fullName) };
    const view = viewDashboardIssue({ facts: fresh, runs: fresh.runs, ...mine, webUrl: opts.webUrl });
    try {
      await syncDashboardIssue(deps, view, fresh);
    } catch (err) {
      log.warn({ repo: f.repo.fullName, err: String(err) }, 'could not write the dashboard issue; retried next pass');
    }
  }
}

/** SP01: the single launch decision point. Call only under the pass lock. */
export async function spawnOnce(deps: PassDeps, trigger: PassTrigger, reaped: Reaped[]): Promise<PassReport> {
  const { store, forge, log } = deps;
  const now = () => deps.clock.now();
  const gathered = await gatherPass(deps);
  await executeHousekeeping({ store, forge, now, log }, gathered.housekeeping);

  const launchDeps = { store, log, launcher: deps.launcher, now, newRunId: deps.newRunId, apiUrl: deps.apiUrl, pauseThreshold: deps.policy.pauseThreshold };
  const { outcomes, after } = await spawnPass(gathered.candidates, gathered.snapshot, deps.policy, async (c, cap) => {
    const facts = await gathered.facts.get(c.repo);
    if (!facts) throw new Error(`no facts were read for ${c.repo}, which produced a candidate`);
    return launchCandidate(launchDeps, c, cap, facts);
  }, deps.rotation ?? 0);

  const passedOver = outcomes.flatMap((o): Waiting[] =>
    o.why ? [{ repo: o.candidate.repo, stage: o.candidate.stage, subject: o.candidate.subject, ...(o.candidate.title !== undefined ? { title: o.candidate.title } : {}), reason: o.why }] : [],
  );
  const waiting = [...passedOver, ...gathered.waiting];

  // Writes after decisions: merges, claim labels, notices, commands found by poll; then verdicts not yet
  // posted, the lander check runs, and last the dashboard issues.
  for (const memo of gathered.facts.values()) {
    const f = await memo;
    if (!f) continue;
    await store.repos.recordRead(f.repo.fullName, repoReadOf(f, now()));
    const fresh: RepoFacts = { ...f, runs: await store.runs.listForRepo(f.repo.fullName), claims: new Map((await store.claims.listForRepo(f.repo.fullName)).map((c) => [c.prNumber, c])) };
    // Reads before the decision: the repository's merge attempts, looked up by the planner.
    const merges = await store.merges.listForRepo(f.repo.fullName);
    const holds = await readHolds({ store, forge }, fresh);
    const actions = planRepoActions(fresh, {
      liveSubjects: after.liveSubjects,
      attempted: (pr, sha, run) => wasAttempted(merges.find((m) => m.prNumber === pr && m.headSha === sha), run),
    }, holds);
    await executeRepoActions({ store, forge, now, log, onMerged: deps.onMerged }, fresh, actions);
    if (deps.onPolledComments) {
      try {
        await deps.onPolledComments(f.repo, f.view.recentComments);
      } catch (err) {
        log.warn({ repo: f.repo.fullName, err: String(err) }, 'polled commands failed; they are retried next pass');
      }
    }
  }
  await postPendingVerdicts({ store, forge, now, log });
  const checkPolicy = { landerAttemptsPerHead: deps.policy.landerAttemptsPerHead, webUrl: deps.webUrl };
  await syncLanderChecks({ store, forge, now, log, policy: checkPolicy, refusals: deps.checkRefusals });
  await syncRunNotices({ store, forge, now, log, webUrl: deps.webUrl });
  await syncDashboardIssues({ store, forge, now, log }, [...gathered.facts.values()], waiting, { webUrl: deps.webUrl, firstPerPass: deps.policy.dashboardIssuesPerPass });

  return {
    trigger,
    repos: gathered.repos.length,
    deferred: gathered.deferred,
    candidates: gathered.candidates,
    outcomes,
    waiting,
    reaped,
    authFailures: gathered.authFailures,
  };
}
