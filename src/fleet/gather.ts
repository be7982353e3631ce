import { utcDayStart, type Clock } from '../kernel/clock.js';
import type { RepoConfig } from '../config/repo-config.js';
import type { CommentView, Forge, MergeQueueRead, RepoRef, RepoView } from '../forge/types.js';
import { CONTROL_LABEL } from '../forge/types.js';
import type { Launcher } from '../launcher/launcher.js';
import type { Log } from '../kernel/log.js';
import type { OpenRequest } from '../store/requests.js';
import type { Store } from '../store/store.js';
import type { Run } from '../store/runs.js';
import type { AfkLabel } from '../store/afk-labels.js';
import type { Ask } from '../store/asks.js';
import { readDemotedAskers, readReviewAsks, standingAsks } from './asks.js';
import type { MergeListener } from './merges.js';
import type { CheckRefusals } from './check-runs.js';
import { viewMaxAgeMs, type ActivitySignals, type RepoActivity } from './activity.js';
import { isAtCap, type LivenessSnapshot } from './cap.js';
import { stageRank, subjectKey, type Candidate, type Waiting } from './candidate.js';
import type { FleetPolicy } from './context.js';
import type { Housekeeping } from './housekeeping.js';
import { forEachLimited } from '../kernel/limit.js';
import { atCapRepos, fixCandidates, landerCandidates, newWorkCandidates, type ProducerContext } from './producers.js';
import { readsAsApproved } from './approval.js';
import { makeRefusal } from '../kernel/codes/table.js';
import { readClaim } from './claims.js';
import { CLAIM_LABEL, baseRefOf, type RepoFacts } from './repo-facts.js';
import { unseenRepoState } from './repo-state.js';
import { errorStack, errorText } from '../kernel/error-text.js';

// The read half of a spawn pass (SP02, SP11): one listing, one snapshot, every
// producer, and each repository's facts read once, within the request
// budget (SC03). It writes nothing; pass.ts decides and writes after it.

/** A repository the pass did not read, and why (SC03). */
export interface Deferral {
  repo: string;
  installationId: number;
  points: number;
}

/** What a full read of one repository costs, in points: the probe, the repository, issues, PRs, comments, config. */
export const READ_ESTIMATE_POINTS = 6;

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
  authFailures: { installationId: number; detail: string }[];
}

/** The read half of a pass: one listing, one snapshot, every producer (SP02, SP11). Writes nothing. */
export async function gatherPass(deps: PassDeps): Promise<Gathered> {
  const { store, forge, policy, log } = deps;
  const trusted = await deps.trustedLogins();
  const housekeeping: Housekeeping[] = [];

  // One repo listing, with one authentication per installation (SP02).
  const authFailures: Gathered['authFailures'] = [];
  const repos: RepoRef[] = [];
  for (const installationId of await forge.listInstallations()) {
    try {
      await forge.authenticate(installationId);
      repos.push(...(await forge.listRepos(installationId)));
    } catch (err) {
      const detail = errorText(err);
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
  const snapshot: LivenessSnapshot = {
    liveCount: live.length,
    liveSubjects: new Set(live.map((r) => subjectKey(r.repo, r.subject))),
  };
  const requests = await store.requests.listOpen();
  const dayStart = utcDayStart(deps.clock.now());
  const spend = new Map<string, number>();
  for (const d of await store.spend.daily(dayStart, dayStart + 86_400_000)) spend.set(d.repo, d.usd);
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
      memo = readFacts(deps, repo, { snapshot, requests, trusted, housekeeping, maxViewAgeMs, spentToday }).catch(
        (err) => {
          log.warn({ repo: repo.fullName, err: errorStack(err) }, 'repo read failed; skipped for this pass');
          return null;
        },
      );
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
      requests.some((r) => r.repo === repo.fullName && r.kind === 'land') ||
      (await readConfig(repo))?.autoland.enabled === true,
    wantsFixes: async (repo) => (await readConfig(repo)) !== null,
  };

  // SC01: read every repository a producer may look at, concurrently and bounded; the
  // producers then decide from these reads in the listing's order, as before.
  // SC03: when an installation's budget is short, repositories with lander and merge work (an
  // open claim or a live run) are read first; the rest wait for a later pass, and say so.
  const deferred: Deferral[] = [];
  const busy = (r: RepoRef) =>
    (deps.activity?.hasOpenClaims(r.fullName) ?? false) || live.some((l) => l.repo === r.fullName);
  const readable = repos
    .filter((r) => !isAtCap(snapshot, policy, r.fullName))
    .sort((a, b) => Number(busy(b)) - Number(busy(a)));
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
    h.type === 'disable'
      ? [
          {
            repo: h.repo.fullName,
            stage: 'new_work' as const,
            subject: null,
            reason: makeRefusal('repo_disabled', { repo: h.repo.fullName, detail: h.reason }),
          },
        ]
      : [],
  );
  const waiting = [...atCapRepos(ctx), ...unread, ...disabled, ...decided.flatMap((d) => d.waiting)].sort(
    (a, b) => stageRank(a.stage) - stageRank(b.stage),
  );
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
async function readAfkLabels(
  deps: PassDeps,
  of: { repo: RepoRef; view: RepoView; runs: readonly Run[]; claimedIssues: readonly number[] },
  reads: PassReads,
): Promise<Map<number, AfkLabel>> {
  const { repo, view, runs, claimedIssues } = of;
  const config = view.config.state === 'valid' ? view.config.config : null;
  const out = new Map((await deps.store.afkLabels.listForRepo(repo.fullName)).map((l) => [l.issueNumber, l]));
  if (!config) return out;
  const now = deps.clock.now();
  for (const issue of view.issues) {
    if (!issue.labels.includes(config.afk_label)) continue;
    const seen = out.get(issue.number);
    const confirmed =
      seen &&
      !readsAsApproved(seen, issue) &&
      runs.some((r) => r.issueNumber === issue.number && r.kind === 'afk_manual' && r.launchedAt >= seen.recordedAt);
    if (!seen || confirmed) {
      const by = seen
        ? seen.labelledBy
        : ((await deps.forge.labelledBy(repo, issue.number, config.afk_label).catch(() => null))?.login ?? null);
      reads.housekeeping.push({
        type: 'record_afk_label',
        repo: repo.fullName,
        issue: issue.number,
        digest: issue.digest,
        labelledBy: by,
      });
      out.set(issue.number, {
        repo: repo.fullName,
        issueNumber: issue.number,
        bodyDigest: issue.digest,
        labelledBy: by,
        recordedAt: now,
        notifiedDigest: null,
      });
      continue;
    }
    if (readsAsApproved(seen, issue) || seen.notifiedDigest === issue.digest) continue;
    if (claimedIssues.includes(issue.number) || runs.some((r) => r.issueNumber === issue.number && r.status === 'live'))
      continue;
    reads.housekeeping.push({
      type: 'notify_issue_edited',
      repo,
      issue: issue.number,
      digest: issue.digest,
      label: config.afk_label,
    });
  }
  return out;
}

async function readFacts(deps: PassDeps, repo: RepoRef, reads: PassReads): Promise<RepoFacts | null> {
  const { store, forge, policy, clock } = deps;
  const view = await forge.readRepo(repo, {
    claimLabel: CLAIM_LABEL,
    configMaxAgeMs: policy.configRefreshMs,
    maxViewAgeMs: reads.maxViewAgeMs,
  });
  deps.activity?.setOpenClaims(repo.fullName, view.claims.length > 0);
  const state = (await store.repos.get(repo.fullName)) ?? unseenRepoState(repo, clock.now());
  if (view.config.state !== 'valid') {
    if (view.config.state === 'invalid') {
      const reason = view.config.reason;
      const control = view.issues.find((i) => i.labels.includes(CONTROL_LABEL));
      reads.housekeeping.push({
        type: 'disable',
        repo,
        reason,
        controlIssue: control?.number ?? null,
        notify: state.disabledNotified !== reason,
      });
    } else if (state.disabledReason) {
      reads.housekeeping.push({ type: 'clear_disabled', repo: repo.fullName });
    }
    return null;
  }
  if (state.disabledReason) reads.housekeeping.push({ type: 'clear_disabled', repo: repo.fullName });
  const runs = await store.runs.listForRepo(repo.fullName);
  const claims = new Map((await store.claims.listForRepo(repo.fullName)).map((c) => [c.prNumber, c]));
  const afkLabels = await readAfkLabels(
    deps,
    { repo, view, runs, claimedIssues: [...claims.values()].map((c) => c.issueNumber) },
    reads,
  );
  // TR33: reviews requesting changes that yoke has not recorded yet are asks (or declined ones), recorded after.
  const known = await store.asks.listForRepo(repo.fullName);
  const found = await readReviewAsks({ forge, now: clock.now }, repo, view.claims, {
    known,
    config: view.config.config,
    trusted: reads.trusted,
  });
  for (const ask of found) reads.housekeeping.push({ type: 'record_ask', ask });
  const recorded = [...known, ...found.map((a, i): Ask => ({ ...a, id: -1 - i, carriedByRun: null }))];
  const asks = standingAsks(recorded, await readDemotedAskers(forge, repo, recorded));
  const mine = reads.requests.filter((r) => r.repo === repo.fullName);
  const startableIssues = new Set<number>();
  // BU05: the issue graph of what new work may start: its summaries come with the issues read.
  const graphs = new Map(view.issues.flatMap((i) => (i.graph ? [[i.number, i.graph] as const] : [])));
  for (const req of mine) {
    if (req.kind === 'land') {
      // A land request for a PR that is no longer an open claim PR can never be served.
      const pull = view.pulls.find((p) => p.number === req.number);
      if (!pull || !readClaim({ repo, runs, claims, view }, pull).claimed)
        reads.housekeeping.push({ type: 'drop_request', requestId: req.id });
      continue;
    }
    if (view.issues.some((i) => i.number === req.number)) continue;
    const issue = await forge.getIssue(repo, req.number);
    if (issue && issue.state === 'open' && !issue.isPull) {
      startableIssues.add(req.number);
      if (issue.graph) graphs.set(req.number, issue.graph);
    } else reads.housekeeping.push({ type: 'drop_request', requestId: req.id }); // closed since it was asked for
  }
  // LD02: where each claim's base branch is now, read every pass: a push there changes no issue, so a cached view would not show it.
  const baseTips = new Map<string, string | null>();
  // LD04: and whether a merge queue is required there, which yoke never merges around (GitHub would refuse too):
  // then the queue itself, its PRs and the merge groups GitHub built, whose commits yoke's landers validate.
  const mergeQueues = new Map<string, MergeQueueRead | null>();
  for (const claim of view.claims) {
    const ref = baseRefOf({ view }, claim.pull);
    if (baseTips.has(ref)) continue;
    baseTips.set(ref, await forge.readBranchTip(repo, ref).catch(() => null));
    if (view.config.config.autoland.enabled && (await forge.requiresMergeQueue(repo, ref).catch(() => null)))
      mergeQueues.set(ref, await forge.readMergeQueue(repo, ref).catch(() => null));
  }
  // Only a blocked issue costs a read: which open issues block it.
  const issueGraph = new Map<number, { blockers: string[] | null; openSubIssues: number }>();
  for (const [n, g] of graphs)
    issueGraph.set(n, {
      blockers: g.blockedBy ? await forge.listBlockers(repo, n).catch(() => null) : [],
      openSubIssues: g.openSubIssues,
    });
  return {
    repo,
    state: { ...state, disabledReason: null },
    config: view.config.config,
    view,
    runs,
    // LD05: only where there are claims to land (a stack is known by the merges that landed it).
    merges: view.claims.length ? await store.merges.listForRepo(repo.fullName) : [],
    enqueues: mergeQueues.size ? await store.enqueues.listForRepo(repo.fullName) : [],
    claims,
    afkLabels,
    baseTips,
    mergeQueues,
    asks,
    requests: mine,
    issueGraph,
    startableIssues,
    trustedLogins: reads.trusted,
    liveSubjects: reads.snapshot.liveSubjects,
    spentToday: reads.spentToday,
    fleetDailyUsd: policy.dailyUsd,
    pauseThreshold: policy.pauseThreshold,
  };
}
