import { forgeWith } from '../../forge/fenced.js';
import { executeRepoActions, planRepoActions, readHolds } from '../landing/autoland.js';
import { postPendingVerdicts } from '../landing/verdict-comments.js';
import { syncLanderChecks } from '../landing/check-runs.js';
import { syncRunNotices } from '../notices/run-notices.js';
import { syncDashboardIssue, viewDashboardIssue } from '../notices/dashboard-issue.js';
import type { Io } from '../context.js';
import type { Candidate, Waiting } from '../candidate.js';
import { executeHousekeeping } from './housekeeping.js';
import { launchCandidate, type LaunchDeps } from '../runs/launch.js';
import { openingLedger } from '../money/ledger.js';
import { fixWaitsForMoneyNotice } from '../notices/messages.js';
import type { Reaped } from '../runs/reaper.js';
import { repoReadOf, type RepoFacts } from '../repo-facts.js';
import { wasAttempted } from '../../store/fleet/merges.js';
import { spawnPass, type PassOutcome } from '../spawn/spawn-pass.js';
import { gatherPass, READ_ESTIMATE_POINTS, type Deferral, type Gathered, type PassDeps } from '../spawn/gather.js';
import { goOn } from '../spawn/pass-deps.js';
import { errorStack } from '../../kernel/error-text.js';
import { inSpan, NO_TRACER } from '../../kernel/trace.js';

// One spawn pass: read everything (gather.ts gatherPass, which writes nothing), decide,
// then write: housekeeping, the locked launches, merges and notices, verdicts.

export type PassTrigger = 'scheduler' | 'reaper' | 'kick';

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
  /** Set when the pass stopped where it stood, or never started, because yoke is stopping (SP10 re-derives it). */
  stopped?: true;
}

/** What a pass that yoke's stop cut short or dropped reports: nothing done, said so. */
export const stoppedPass = (trigger: PassTrigger): PassReport => ({
  trigger,
  repos: 0,
  deferred: [],
  candidates: [],
  outcomes: [],
  waiting: [],
  reaped: [],
  authFailures: [],
  stopped: true,
});

/**
 * The dashboard issues, last of the pass's writes: merges, landers and fixes spend the request budget
 * first (SC03). A repository whose installation is short of points (or, for a first issue, of
 * content-creating writes) keeps its body for a later pass, and at most `firstPerPass` repositories
 * get their first dashboard issue in one pass, so a new installation's are spread over passes.
 */
async function syncDashboardIssues(
  deps: Io,
  memos: Promise<RepoFacts | null>[],
  waiting: readonly Waiting[],
  opts: { webUrl: string; firstPerPass: number },
): Promise<void> {
  const { store, forge, log } = deps;
  const waitingOf = new Map<string, Waiting[]>();
  for (const w of waiting) waitingOf.set(w.repo, [...(waitingOf.get(w.repo) ?? []), w]);
  let firsts = 0;
  const all = (await Promise.all(memos)).filter((f): f is RepoFacts => f !== null && f.config.dashboard_issue);
  // SC01: what each needs of the store, a query per kind: its issue, its runs as they are now, its owed deliveries.
  const names = all.map((f) => f.repo.fullName);
  const issues = await store.dashboardIssues.listForRepos(names);
  const runs = await store.runs.listForRepos(names);
  const owed = await store.deliveryItems.listOwedForRepos(names);
  for (const f of all) {
    if (forge.budgetLeft(f.repo.installationId).points < DASHBOARD_RESERVE_POINTS) continue;
    const recorded = issues.get(f.repo.fullName) ?? null;
    if (!recorded) {
      if (
        firsts >= opts.firstPerPass ||
        forge.budgetLeft(f.repo.installationId).contentWrites < DASHBOARD_RESERVE_WRITES
      )
        continue;
      firsts++;
    }
    const fresh = { ...f, runs: runs.get(f.repo.fullName) ?? [] };
    const mine = { waiting: waitingOf.get(f.repo.fullName) ?? [], owed: owed.get(f.repo.fullName) ?? [] };
    const view = viewDashboardIssue({
      facts: fresh,
      runs: fresh.runs,
      ...mine,
      webUrl: opts.webUrl,
      now: deps.clock.now(),
    });
    try {
      await syncDashboardIssue(deps, view, fresh, recorded);
    } catch (err) {
      log.warn(
        { repo: f.repo.fullName, err: errorStack(err) },
        'could not write the dashboard issue; retried next pass',
      );
    }
  }
}

/**
 * BU03: a fix the budgets cannot cover says so on its claim PR, once per PR and UTC day: which budget holds
 * what, and when it starts again. The wait is on the dashboards as well.
 */
async function tellFixesWaitingForMoney(
  deps: Io,
  outcomes: readonly PassOutcome[],
  facts: ReadonlyMap<string, Promise<RepoFacts | null>>,
): Promise<void> {
  const day = new Date(deps.clock.now()).toISOString().slice(0, 10);
  for (const o of outcomes) {
    const { candidate: c, result } = o;
    if (result.kind !== 'over_budget' || c.kind !== 'fix' || c.prNumber === null) continue;
    const f = await facts.get(c.repo);
    if (!f || (await deps.store.moneyNotices.told(c.repo, c.prNumber, day))) continue;
    try {
      const id = await deps.forge.createComment(f.repo, c.prNumber, fixWaitsForMoneyNotice(c.prNumber, result.why));
      await deps.store.moneyNotices.record(c.repo, c.prNumber, day, id, deps.clock.now());
    } catch (err) {
      deps.log.warn(
        { repo: c.repo, pr: c.prNumber, err: errorStack(err) },
        'could not say a fix waits for money; said next pass',
      );
    }
  }
}

/** SP01: the single launch decision point. Call only under the pass lock. */
/**
 * The forge for one pass, asking GitHub what a login may do on a repository once per pass: the reads that
 * record an ask and the ones that decide a merge (TR33) share the answer.
 */
function passForge(forge: PassDeps['forge']): PassDeps['forge'] {
  const asked = new Map<string, ReturnType<PassDeps['forge']['getPermission']>>();
  const getPermission: PassDeps['forge']['getPermission'] = (repo, login) => {
    const key = `${repo.fullName.toLowerCase()}\0${login.toLowerCase()}`;
    if (!asked.has(key)) asked.set(key, forge.getPermission(repo, login));
    return asked.get(key)!;
  };
  return forgeWith(forge, { getPermission });
}

/** SP01: the candidates taken in order, each launched under the pass lock, against the budgets' opening ledger. */
async function launchPass(deps: PassDeps, gathered: Gathered): ReturnType<typeof spawnPass> {
  // BU01: what the budgets hold as the launches begin: each run launched this month costs what it reported, or
  // what it reserved; the pass adds each reservation it makes, in stage order.
  const ledger = await openingLedger(deps.store, deps.clock.now());
  const launchDeps: LaunchDeps = {
    store: deps.store,
    forge: deps.forge,
    log: deps.log,
    launcher: deps.launcher,
    clock: deps.clock,
    newRunId: deps.newRunId,
    apiUrl: deps.apiUrl,
    pauseThreshold: deps.policy.pauseThreshold,
    budgets: deps.policy,
    ledger,
    ...(deps.tracer ? { tracer: deps.tracer } : {}),
  };
  return spawnPass(
    gathered.candidates,
    gathered.snapshot,
    deps.policy,
    async (c, cap) => {
      goOn(deps);
      const facts = await gathered.facts.get(c.repo);
      if (!facts) throw new Error(`no facts were read for ${c.repo}, which produced a candidate`);
      return launchCandidate(launchDeps, c, cap, facts);
    },
    deps.rotation ?? 0,
  );
}

/**
 * Each repository's writes after the launches (claim labels, holds, notices, commands found by poll), read
 * fresh; the merges they owe are handed back, to be made after the check runs.
 */
async function actOnRepos(
  deps: PassDeps,
  io: Io,
  gathered: Gathered,
  after: Awaited<ReturnType<typeof spawnPass>>['after'],
): Promise<(() => Promise<void>)[]> {
  const { store } = io;
  const mergesOwed: (() => Promise<void>)[] = [];
  // SC01, SC10: the digest of every repository's last read in one query: a read that found the same costs no write.
  // Facts taken again from an earlier pass were recorded then.
  const { again } = gathered;
  const lastReads = await store.repos.readDigests(
    again.size ? [...gathered.facts.keys()].filter((name) => !again.has(name)) : undefined,
  );
  for (const memo of gathered.facts.values()) {
    const f = await memo;
    if (!f) continue;
    goOn(deps);
    if (!again.has(f.repo.fullName))
      await store.repos.recordRead(
        f.repo.fullName,
        repoReadOf(f, io.clock.now()),
        lastReads.get(f.repo.fullName) ?? null,
      );
    // A repository with no open PR has no claim to label, hold or merge: only its polled commands are left.
    if (f.view.pulls.length === 0 && f.view.claims.length === 0) {
      await polledCommands(deps, io, f);
      continue;
    }
    // Reads before the decision: the repository's merge attempts, looked up by the planner.
    const merges = await store.merges.listForRepo(f.repo.fullName);
    const fresh: RepoFacts = {
      ...f,
      runs: await store.runs.listForRepo(f.repo.fullName),
      merges,
      enqueues: f.mergeQueues?.size ? await store.enqueues.listForRepo(f.repo.fullName) : [],
      claims: new Map((await store.claims.listForRepo(f.repo.fullName)).map((c) => [c.prNumber, c])),
    };
    const holds = await readHolds(io, fresh);
    const actions = planRepoActions(
      fresh,
      {
        liveSubjects: after.liveSubjects,
        attempted: (pr, sha, run) =>
          wasAttempted(
            merges.find((m) => m.prNumber === pr && m.headSha === sha),
            run,
          ),
      },
      holds,
    );
    const actionDeps = { ...io, onMerged: deps.onMerged };
    await executeRepoActions(
      actionDeps,
      fresh,
      actions.filter((a) => a.type !== 'merge'),
    );
    const owed = actions.filter((a) => a.type === 'merge');
    if (owed.length) mergesOwed.push(() => executeRepoActions(actionDeps, fresh, owed));
    await polledCommands(deps, io, f);
  }
  return mergesOwed;
}

/** The commands found by poll in a repository's newest comments, handled; a failure waits for the next pass. */
async function polledCommands(deps: PassDeps, io: Io, f: RepoFacts): Promise<void> {
  if (!deps.onPolledComments) return;
  try {
    await deps.onPolledComments(f.repo, f.view.recentComments);
  } catch (err) {
    io.log.warn({ repo: f.repo.fullName, err: errorStack(err) }, 'polled commands failed; they are retried next pass');
  }
}

export async function spawnOnce(given: PassDeps, trigger: PassTrigger, reaped: Reaped[]): Promise<PassReport> {
  const deps = { ...given, forge: passForge(given.forge) };
  const tracer = deps.tracer ?? NO_TRACER;
  const io: Io = { store: deps.store, forge: deps.forge, clock: deps.clock, log: deps.log, tracer };
  const gathered = await inSpan(tracer, 'yoke.pass.gather', {}, () => gatherPass(deps));
  goOn(deps);
  await executeHousekeeping(io, gathered.housekeeping);
  const { outcomes, after } = await inSpan(tracer, 'yoke.pass.decide', {}, () => launchPass(deps, gathered));

  const passedOver = outcomes.flatMap((o): Waiting[] =>
    o.why
      ? [
          {
            repo: o.candidate.repo,
            stage: o.candidate.stage,
            subject: o.candidate.subject,
            ...(o.candidate.title !== undefined ? { title: o.candidate.title } : {}),
            reason: o.why,
          },
        ]
      : [],
  );
  const waiting = [...passedOver, ...gathered.waiting];
  await tellFixesWaitingForMoney(io, outcomes, gathered.facts);

  // Writes after decisions: claim labels, holds, notices, commands found by poll; then verdicts not yet
  // posted, the lander check runs, the merges, and last the dashboard issues.
  const mergesOwed = await inSpan(tracer, 'yoke.pass.write', {}, () => actOnRepos(deps, io, gathered, after));
  await postPendingVerdicts(io);
  const checkPolicy = { landerAttemptsPerHead: deps.policy.landerAttemptsPerHead, webUrl: deps.webUrl };
  await syncLanderChecks({ ...io, policy: checkPolicy, refusals: deps.checkRefusals });
  // Merges come after the check runs: the head's yoke/lander check already says success when GitHub is
  // asked to merge it, as a branch rule that requires the check would insist.
  for (const merge of mergesOwed) {
    goOn(deps);
    await merge();
  }
  goOn(deps);
  await syncRunNotices({ ...io, webUrl: deps.webUrl });
  await syncDashboardIssues(io, [...gathered.facts.values()], waiting, {
    webUrl: deps.webUrl,
    firstPerPass: deps.policy.dashboardIssuesPerPass,
  });

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
