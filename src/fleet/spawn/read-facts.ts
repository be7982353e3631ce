import type { RepoConfig } from '../../config/repo-config.js';
import type { Forge, MergeQueueRead, RepoRef, RepoView } from '../../forge/types.js';
import { CONTROL_LABEL } from '../../forge/types.js';
import type { OpenRequest } from '../../store/fleet/requests.js';
import type { Run } from '../../store/fleet/runs.js';
import type { AfkLabel } from '../../store/fleet/afk-labels.js';
import type { Ask } from '../../store/fleet/asks.js';
import { readDemotedAskers, readReviewAsks, standingAsks } from './asks.js';
import type { LivenessSnapshot } from '../cap.js';
import type { Housekeeping } from '../engine/housekeeping.js';
import { readsAsApproved } from './approval.js';
import { readClaim, type ClaimFacts } from './claims.js';
import { CLAIM_LABEL, baseRefOf, type RepoFacts } from '../repo-facts.js';
import { unseenRepoState } from '../repo-state.js';
import type { RepoState } from '../../store/fleet/repos.js';
import type { PassDeps } from './pass-deps.js';
import type { PassMemo, PassWide, StoredFacts } from './pass-memo.js';

// One repository's facts for a pass (SP11), read once and within the budget (SC03): its view, what yoke
// recorded of it, the asks, requests, base branches and merge queues its decisions need. Writes nothing;
// what it finds to write goes to the pass's housekeeping.

export type { StoredFacts } from './pass-memo.js';

/** SC01: the store's facts of these repositories, in four queries (the repositories' own rows are read already). */
export async function readStored(
  store: PassDeps['store'],
  repos: readonly string[],
  states: ReadonlyMap<string, RepoState>,
): Promise<StoredFacts> {
  return {
    states,
    runs: await store.runs.listForRepos(repos),
    claims: await store.claims.listForRepos(repos),
    afkLabels: await store.afkLabels.listForRepos(repos),
    asks: await store.asks.listForRepos(repos),
  };
}

/** What each repository's read shares with the pass, and where it plans the writes it found necessary. */
export interface PassReads {
  stored: StoredFacts;
  snapshot: LivenessSnapshot;
  requests: readonly OpenRequest[];
  trusted: ReadonlySet<string>;
  /** Where this read plans the writes it found necessary. */
  housekeeping: Housekeeping[];
  /** SC02: how old a cached view may be and still stand in for a probe (0: probe now). */
  maxViewAgeMs: number;
  spentToday: RepoFacts['spentToday'];
  /**
   * SC10: what earlier passes derived, the repositories whose store rows stood this pass, and where this pass
   * says which repositories' facts it took again (no memo: every repository is derived afresh).
   */
  kept?: { memo: PassMemo; standing: ReadonlySet<string>; again: Set<string> };
}

/**
 * TR24's reads: what each AFK issue read as when a writer approved it: when yoke first saw its label (recorded
 * now on first sight, with who applied the label), or at a writer's `/yoke start` (recorded by the command).
 * Nothing else approves a text: no launch re-records it. An edited one is said once to wait, on the issue,
 * claimed or not (a claimed one holds its PR's fix runs).
 */
async function readAfkLabels(
  deps: PassDeps,
  of: { repo: RepoRef; view: RepoView; runs: readonly Run[]; claims: readonly { pr: number; issue: number }[] },
  reads: PassReads,
): Promise<Map<number, AfkLabel>> {
  const { repo, view, runs, claims } = of;
  const config = view.config.state === 'valid' ? view.config.config : null;
  const out = new Map((reads.stored.afkLabels.get(repo.fullName) ?? []).map((l) => [l.issueNumber, l]));
  if (!config) return out;
  const now = deps.clock.now();
  for (const issue of view.issues) {
    if (!issue.labels.includes(config.afk_label)) continue;
    const seen = out.get(issue.number);
    if (!seen) {
      const by = (await deps.forge.labelledBy(repo, issue.number, config.afk_label).catch(() => null))?.login ?? null;
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
    // A run already working from the approved text: the runner, which reads the issue again, holds it.
    if (runs.some((r) => r.issueNumber === issue.number && r.status === 'live')) continue;
    reads.housekeeping.push({
      type: 'notify_issue_edited',
      repo,
      issue: issue.number,
      digest: issue.digest,
      label: config.afk_label,
      claim: claims.find((c) => c.issue === issue.number)?.pr ?? null,
    });
  }
  return out;
}

/**
 * The issues a start was asked for that the view does not hold, read one by one (a request that can never be
 * served is dropped), and BU05: the issue graph of what new work may start. Only a blocked issue costs a
 * read: which open issues block it.
 */
async function readRequested(
  forge: Forge,
  at: ClaimFacts & { repo: RepoRef; view: RepoView },
  mine: readonly OpenRequest[],
  reads: PassReads,
): Promise<Pick<RepoFacts, 'startableIssues' | 'issueGraph'>> {
  const { repo, view } = at;
  const startableIssues = new Map<number, string>();
  // Their summaries come with the issues read.
  const graphs = new Map(view.issues.flatMap((i) => (i.graph ? [[i.number, i.graph] as const] : [])));
  for (const req of mine) {
    if (req.kind === 'land') {
      // A land request for a PR that is no longer an open claim PR can never be served.
      const pull = view.pulls.find((p) => p.number === req.number);
      if (!pull || !readClaim(at, pull).claimed) reads.housekeeping.push({ type: 'drop_request', requestId: req.id });
      continue;
    }
    if (view.issues.some((i) => i.number === req.number)) continue;
    const issue = await forge.getIssue(repo, req.number);
    if (issue && issue.state === 'open' && !issue.isPull) {
      startableIssues.set(req.number, issue.digest);
      if (issue.graph) graphs.set(req.number, issue.graph);
    } else reads.housekeeping.push({ type: 'drop_request', requestId: req.id }); // closed since it was asked for
  }
  const issueGraph = new Map<number, { blockers: string[] | null; openSubIssues: number }>();
  for (const [n, g] of graphs)
    issueGraph.set(n, {
      blockers: g.blockedBy ? await forge.listBlockers(repo, n).catch(() => null) : [],
      openSubIssues: g.openSubIssues,
    });
  return { startableIssues, issueGraph };
}

/**
 * LD02: where each claim's base branch is now, read every pass: a push there changes no issue, so a cached
 * view would not show it. LD04: and whether a merge queue is required there, which yoke never merges around
 * (GitHub would refuse too): then the queue itself, its PRs and the merge groups GitHub built, whose commits
 * yoke's landers validate.
 */
async function readBases(
  forge: Forge,
  repo: RepoRef,
  { view, config }: { view: RepoView; config: RepoConfig },
): Promise<{ baseTips: Map<string, string | null>; mergeQueues: Map<string, MergeQueueRead | null> }> {
  const baseTips = new Map<string, string | null>();
  const mergeQueues = new Map<string, MergeQueueRead | null>();
  for (const claim of view.claims) {
    const ref = baseRefOf({ view }, claim.pull);
    if (baseTips.has(ref)) continue;
    baseTips.set(ref, await forge.readBranchTip(repo, ref).catch(() => null));
    if (config.autoland.enabled && (await forge.requiresMergeQueue(repo, ref).catch(() => null)))
      mergeQueues.set(ref, await forge.readMergeQueue(repo, ref).catch(() => null));
  }
  return { baseTips, mergeQueues };
}

/** One repository's facts for this pass: taken again from an earlier pass where nothing they came from changed (SC10). */
export async function readFacts(deps: PassDeps, repo: RepoRef, reads: PassReads): Promise<RepoFacts | null> {
  const wrote: Housekeeping[] = [];
  try {
    const f = await derive(deps, repo, { ...reads, housekeeping: wrote });
    if (f && reads.kept) reads.kept.memo.keep(f, wrote);
    return f;
  } finally {
    reads.housekeeping.push(...wrote);
  }
}

/** What a repository's facts take from the pass as it is now, whether derived afresh or taken again (SC10). */
const passWideOf = (deps: PassDeps, repo: RepoRef, reads: PassReads): PassWide => ({
  repo,
  requests: reads.requests.filter((r) => r.repo === repo.fullName),
  trustedLogins: reads.trusted,
  liveSubjects: reads.snapshot.liveSubjects,
  spentToday: reads.spentToday,
  fleetDailyUsd: deps.policy.dailyUsd,
  pauseThreshold: deps.policy.pauseThreshold,
});

async function derive(deps: PassDeps, repo: RepoRef, reads: PassReads): Promise<RepoFacts | null> {
  const { store, forge, policy, clock } = deps;
  const view = await forge.readRepo(repo, {
    claimLabel: CLAIM_LABEL,
    configMaxAgeMs: policy.configRefreshMs,
    maxViewAgeMs: reads.maxViewAgeMs,
  });
  deps.activity?.setOpenClaims(repo.fullName, view.claims.length > 0);
  const passWide = passWideOf(deps, repo, reads);
  const mine = passWide.requests;
  const again = reads.kept?.memo.again(view, reads.kept.standing, passWide);
  if (again) {
    reads.kept!.again.add(repo.fullName);
    return again;
  }
  const state = reads.stored.states.get(repo.fullName) ?? unseenRepoState(repo, clock.now());
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
  const runs = reads.stored.runs.get(repo.fullName) ?? [];
  const claims = new Map((reads.stored.claims.get(repo.fullName) ?? []).map((c) => [c.prNumber, c]));
  const afkLabels = await readAfkLabels(
    deps,
    {
      repo,
      view,
      runs,
      // The open claim PRs, as this pass reads their claims.
      claims: view.claims.flatMap((c) => {
        const r = readClaim({ repo, runs, claims, view }, c.pull);
        return r.claimed ? [{ pr: c.pull.number, issue: r.issueNumber }] : [];
      }),
    },
    reads,
  );
  // TR33: reviews requesting changes that yoke has not recorded yet are asks (or declined ones), recorded after.
  const known = reads.stored.asks.get(repo.fullName) ?? [];
  const found = await readReviewAsks({ forge, now: clock.now }, repo, view.claims, {
    known,
    config: view.config.config,
    trusted: reads.trusted,
  });
  for (const ask of found) reads.housekeeping.push({ type: 'record_ask', ask });
  const recorded = [...known, ...found.map((a, i): Ask => ({ ...a, id: -1 - i, carriedByRun: null }))];
  const asks = standingAsks(recorded, await readDemotedAskers(forge, repo, recorded));
  const { startableIssues, issueGraph } = await readRequested(forge, { repo, runs, claims, view }, mine, reads);
  const { baseTips, mergeQueues } = await readBases(forge, repo, { view, config: view.config.config });
  return {
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
    issueGraph,
    startableIssues,
    ...passWide,
  };
}
