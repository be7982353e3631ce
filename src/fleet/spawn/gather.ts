import { utcDayStart } from '../../kernel/clock.js';
import type { RepoConfig } from '../../config/repo-config.js';
import type { RepoRef } from '../../forge/types.js';
import { viewMaxAgeMs, type ActivitySignals } from '../activity.js';
import { isAtCap, type LivenessSnapshot } from '../cap.js';
import { deferralRefusal, stageRank, subjectKey, type Candidate, type Deferral, type Waiting } from '../candidate.js';
import type { Housekeeping } from '../engine/housekeeping.js';
import { forEachLimited } from '../../kernel/limit.js';
import {
  atCapRepos,
  fixCandidates,
  landerCandidates,
  mayDecide,
  newWorkCandidates,
  type ProducerContext,
} from './producers.js';
import { makeRefusal } from '../../kernel/codes/table.js';
import { type RepoFacts } from '../repo-facts.js';
import { readFacts, readStored, type PassReads } from './read-facts.js';
import { PassMemo } from './pass-memo.js';
import { inReadOrder } from '../read-order.js';
import { goOn, NotShared, READ_ESTIMATE_POINTS, type PassDeps } from './pass-deps.js';
import type { Run } from '../../store/fleet/runs.js';
import { errorStack, errorText } from '../../kernel/error-text.js';

// The read half of a spawn pass (SP02, SP11): one listing, one snapshot, every
// producer, and each repository's facts read once, within the request
// budget (SC03). It writes nothing; pass.ts decides and writes after it. A
// repository's own read: read-facts.ts.

export { READ_ESTIMATE_POINTS, type PassDeps } from './pass-deps.js';
export type { Deferral } from '../candidate.js';

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
  /** SC10: the repositories whose facts were taken again from an earlier pass (what their read found is recorded already). */
  again: ReadonlySet<string>;
}

/** One repo listing, with one authentication per installation (SP02), and what the store holds of the repositories listed; an installation that fails is skipped, and said. */
async function listRepos(
  deps: PassDeps,
  housekeeping: Housekeeping[],
): Promise<Pick<Gathered, 'repos' | 'authFailures' | 'again'> & Pick<PassReads, 'stored' | 'kept'>> {
  const { store, forge, log } = deps;
  // SC01: each installation is listed on its own token, all at once; repositories and failures keep the
  // installations' order. SC10: the app's installations as this process's reading tick last listed them (every
  // tick), or as the pass listed them within the idle probe period.
  const listed = await Promise.all(
    (await forge.listInstallations({ maxAgeMs: deps.policy.idleProbeMs })).map(async (installationId) => {
      try {
        await forge.authenticate(installationId);
        // SC10: an installation's listing stands in for an idle probe's period, unless its repositories changed.
        return { repos: await forge.listRepos(installationId, { maxAgeMs: deps.policy.idleProbeMs }), failed: [] };
      } catch (err) {
        const detail = errorText(err);
        log.warn({ installationId, detail }, 'installation skipped for this pass');
        return { repos: [], failed: [{ installationId, detail }] };
      }
    }),
  );
  const repos = listed.flatMap((l) => l.repos);
  const authFailures: Gathered['authFailures'] = listed.flatMap((l) => l.failed);
  const names = repos.map((r) => r.fullName);
  // SC10: each repository's version first, then the rows of those whose version moved (all, without a memo: an
  // empty one keeps nothing from before).
  const versions = deps.memo ? await store.repos.versions() : new Map<string, number>();
  const { stored, standing } = await (deps.memo ?? new PassMemo()).stored(names, versions, async (changed) => {
    // SC01: the repositories yoke knows in one query, not one each; then what the store holds of them, a query per kind.
    const states = changed.length * 2 > names.length ? await store.repos.list() : await store.repos.listFor(changed);
    return readStored(store, changed, new Map(states.map((r) => [r.fullName, r])));
  });
  for (const repo of repos) {
    const known = stored.states.get(repo.fullName);
    if (!known || known.installationId !== repo.installationId) {
      housekeeping.push({ type: 'ensure_repo', repo: repo.fullName, installationId: repo.installationId });
    }
  }
  // Where this pass's reads take facts again, and say which they took (SC10).
  const again = new Set<string>();
  const kept = deps.memo ? { memo: deps.memo, standing, again } : undefined;
  return { repos, authFailures, stored, kept, again };
}

/** How many of `items` each key has. */
function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

/** What every repository's read shares: the liveness snapshot, the open requests and today's spend. */
async function passSnapshot(deps: PassDeps) {
  const { store } = deps;
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
  return { live, snapshot, requests, spend, fleetSpend };
}

/**
 * SC01: reads every repository a producer may look at; the producers then decide from these reads in the
 * listing's order. Each installation reads on its own budget and its own bound, all installations at once.
 * SC03: a read goes ahead only while its installation's budget has room for it, counting the reads of that
 * installation in flight; repositories with lander and merge work (an open claim or a live run) are read
 * first, and the rest wait for a later pass, and say so. A pass never waits out a minute for its budget.
 */
async function readAll(
  deps: PassDeps,
  ctx: ProducerContext,
  shared: {
    live: readonly Run[];
    facts: Map<string, Promise<RepoFacts | null>>;
    free: (repo: RepoRef) => boolean;
  },
): Promise<Deferral[]> {
  const { forge, policy } = deps;
  const deferred: Deferral[] = [];
  const withRuns = new Set(shared.live.map((l) => l.repo));
  const busy = (r: RepoRef) => (deps.activity?.hasOpenClaims(r.fullName) ?? false) || withRuns.has(r.fullName);
  const byInstallation = new Map<number, RepoRef[]>();
  for (const r of ctx.repos) {
    if (isAtCap(ctx.snapshot, policy, r.fullName)) continue;
    const mine = byInstallation.get(r.installationId);
    if (mine) mine.push(r);
    else byInstallation.set(r.installationId, [r]);
  }
  await Promise.all(
    [...byInstallation].map(async ([installationId, repos]) => {
      let reading = 0;
      const readable = inReadOrder(repos, busy, (r) => forge.everRead(r));
      await forEachLimited(readable, policy.readConcurrency, async (repo) => {
        if (deps.stopping?.aborted) return;
        const points = forge.budgetLeft(installationId).points - reading * READ_ESTIMATE_POINTS;
        if (points < READ_ESTIMATE_POINTS && !shared.facts.has(repo.fullName) && !shared.free(repo)) {
          deferred.push({ repo: repo.fullName, installationId, points: Math.max(0, points) });
          shared.facts.set(repo.fullName, Promise.resolve(null));
          return;
        }
        reading++;
        try {
          await ctx.facts(repo);
        } finally {
          reading--;
        }
      });
    }),
  );
  // In the listing's order, whichever installation finished first.
  const order = new Map(ctx.repos.map((r, i) => [r.fullName, i]));
  return deferred.sort((a, b) => order.get(a.repo)! - order.get(b.repo)!);
}

/** What the pass passes over without a candidate: repositories at their cap, unread (SC03) or disabled. */
function passedOver(
  ctx: ProducerContext,
  deferred: readonly Deferral[],
  housekeeping: readonly Housekeeping[],
): Waiting[] {
  const unread: Waiting[] = deferred.map((d) => ({
    repo: d.repo,
    stage: 'lander',
    subject: null,
    reason: deferralRefusal(d),
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
  return [...atCapRepos(ctx), ...unread, ...disabled];
}

/**
 * SC10: each repository's opt-in file as the producers ask it (each asks it of every repository): asked of the forge
 * once per pass; none for a repository the budget left unread (SC03).
 */
function passConfigs(deps: PassDeps, unread: ReadonlySet<string>): (repo: RepoRef) => Promise<RepoConfig | null> {
  const configs = new Map<string, Promise<RepoConfig | null>>();
  return (repo) => {
    if (unread.has(repo.fullName)) return Promise.resolve(null);
    let memo = configs.get(repo.fullName);
    if (!memo) {
      memo = deps.forge
        .readConfig(repo, { maxAgeMs: deps.policy.configRefreshMs })
        .then((cfg) => (cfg.state === 'valid' ? cfg.config : null));
      configs.set(repo.fullName, memo);
    }
    return memo;
  };
}

/**
 * SC10: the repositories, in the listing's order, where a producer may find a candidate or something that waits
 * (mayDecide): a repository whose facts were read and show none is passed by; one not read yet is kept, and the
 * producers read it as before.
 */
async function mayDecideRepos(
  ctx: ProducerContext,
  facts: ReadonlyMap<string, Promise<RepoFacts | null>>,
): Promise<RepoRef[]> {
  const out: RepoRef[] = [];
  for (const repo of ctx.repos) {
    const memo = facts.get(repo.fullName);
    const f = memo ? await memo : undefined;
    if (f !== null && (f === undefined || mayDecide(f))) out.push(repo);
  }
  return out;
}

/** The read half of a pass: one listing, one snapshot, every producer (SP02, SP11). Writes nothing. */
export async function gatherPass(deps: PassDeps): Promise<Gathered> {
  const { forge, policy, log } = deps;
  const trusted = await deps.trustedLogins();
  const housekeeping: Housekeeping[] = [];
  const { repos, authFailures, stored, kept, again } = await listRepos(deps, housekeeping);
  const { live, snapshot, requests, spend, fleetSpend } = await passSnapshot(deps);

  const facts = new Map<string, Promise<RepoFacts | null>>();
  const unshared: Deferral[] = [];
  // A repository the budget left unread this pass is not read by a producer either (SC03).
  const unread = new Set<string>();
  const readConfig = passConfigs(deps, unread);
  // SC02: how old a repository's last view may be and still stand in for a probe. Counted once per pass.
  const liveRuns = countBy(live, (r) => r.repo);
  const openRequests = countBy(requests, (r) => r.repo);
  const landRequested = new Set(requests.flatMap((r) => (r.kind === 'land' ? [r.repo] : [])));
  const viewAgeOf = (repo: RepoRef): number => {
    const signals: ActivitySignals = {
      liveRuns: liveRuns.get(repo.fullName) ?? 0,
      openRequests: openRequests.get(repo.fullName) ?? 0,
      openClaims: deps.activity?.hasOpenClaims(repo.fullName) ?? true,
      wokenAt: deps.activity?.wokenAt(repo.fullName) ?? null,
    };
    return viewMaxAgeMs(signals, deps.clock.now(), policy);
  };
  const factsOf = (repo: RepoRef): Promise<RepoFacts | null> => {
    let memo = facts.get(repo.fullName);
    if (!memo) {
      const maxViewAgeMs = viewAgeOf(repo);
      const spentToday = { repo: spend.get(repo.fullName) ?? 0, fleet: fleetSpend };
      memo = readFacts(deps, repo, {
        stored,
        snapshot,
        requests,
        trusted,
        housekeeping,
        maxViewAgeMs,
        spentToday,
        ...(kept ? { kept } : {}),
      }).catch((err) => {
        // SC09: another process reads it and has not shared it yet: it waits for a later pass, said.
        if (err instanceof NotShared) {
          unshared.push({ repo: repo.fullName, installationId: repo.installationId, points: 0, reader: err.reader });
          return null;
        }
        // A read cut short by yoke's stop is no failure: the pass stops too.
        if (!deps.stopping?.aborted)
          log.warn({ repo: repo.fullName, err: errorStack(err) }, 'repo read failed; skipped for this pass');
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
      landRequested.has(repo.fullName) || (await readConfig(repo))?.autoland.enabled === true,
    wantsFixes: async (repo) => (await readConfig(repo)) !== null,
  };
  // An idle repository whose last view stands in costs no request: it is read whatever the budget.
  const free = (repo: RepoRef) =>
    forge.standsIn(repo, { maxViewAgeMs: viewAgeOf(repo), configMaxAgeMs: policy.configRefreshMs });
  const deferred = [...(await readAll(deps, ctx, { live, facts, free })), ...unshared];
  for (const d of deferred) unread.add(d.repo);
  goOn(deps); // a stop mid-read: the producers would read the rest themselves

  // Producers gather from the same snapshot; none launches (SP03, SP11). SC10: over the repositories where one
  // may find something (every one read or deferred above, but those at their cap, which no producer reads).
  const deciding = { ...ctx, repos: await mayDecideRepos(ctx, facts) };
  const decided = [await landerCandidates(deciding), await fixCandidates(deciding), await newWorkCandidates(deciding)];
  const candidates = decided.flatMap((d) => d.candidates);
  const waiting = [...passedOver(ctx, deferred, housekeeping), ...decided.flatMap((d) => d.waiting)].sort(
    (a, b) => stageRank(a.stage) - stageRank(b.stage),
  );
  return { repos, snapshot, candidates, facts, housekeeping, deferred, waiting, authFailures, again };
}
