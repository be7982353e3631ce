import { issueEditedSinceLabel } from './approval.js';
import { makeRefusal } from '../kernel/codes/table.js';
import { effectiveCap, isAtCap, type CapPolicy, type LivenessSnapshot } from './cap.js';
import {
  issueSubject,
  pullSubject,
  subjectKey,
  type Candidate,
  type Decided,
  type SpawnStage,
  type Waiting,
} from './candidate.js';
import { readClaim } from './claims.js';
import { baseRefOf, baseTipOf, type RepoFacts } from './repo-facts.js';
import { isLandable, rejectedHead, rejectToRerun, verdictNow } from './verdicts.js';
import { autoLoopOn, isPaused } from './repo-state.js';
import type { ClaimView, IssueView, RepoRef } from '../forge/types.js';
import { isAfkKind, type RunKind } from '../store/runs.js';
import { askKeys, askedBy, fixAsksOf, fixWhy, openStartAsks } from './asks.js';

// Producers gather and never launch. Each skips a repo already at its cap
// in the snapshot before paying any forge read for it (SP12); the decisions
// themselves are pure functions of RepoFacts.

export interface ProducerContext {
  repos: readonly RepoRef[];
  snapshot: LivenessSnapshot;
  policy: CapPolicy & { landerAttemptsPerHead: number };
  /** Lazy, memoized per pass: the repo's facts, or null when it is not usable. */
  facts(repo: RepoRef): Promise<RepoFacts | null>;
  /** The repo's autoland switch from its (cached) config, without the full read. */
  wantsLanders(repo: RepoRef): Promise<boolean>;
  /** Whether the repository may want a fix at all (fix-forward on, or review and command fixes: its config is valid). */
  wantsFixes(repo: RepoRef): Promise<boolean>;
}

/** The issue a claim PR delivers, as its claim records it. */
const claimedIssue = (facts: RepoFacts, claim: ClaimView): number | null => {
  const reading = readClaim(facts, claim.pull);
  return reading.claimed ? reading.issueNumber : null;
};

const live = (facts: RepoFacts, subject: string): boolean =>
  facts.liveSubjects.has(subjectKey(facts.repo.fullName, subject));

/**
 * A live subject holds back work of another kind, which then waits `in_flight`.
 * A live run of the very kind that would launch is that work, running: nothing waits.
 */
const heldBack = (facts: RepoFacts, subject: string, kind: RunKind): boolean =>
  live(facts, subject) && facts.runs.find((r) => r.status === 'live' && r.subject === subject)?.kind !== kind;

/** The title the pass read for `issue#N` or `pr#N`. */
function titleOf(facts: RepoFacts, subject: string): string | undefined {
  const [kind, n] = subject.split('#') as [string, string];
  const list = kind === 'pr' ? facts.view.pulls : facts.view.issues;
  return list.find((x) => x.number === Number(n))?.title;
}

const waiting = (facts: RepoFacts, stage: SpawnStage, subject: string, reason: Waiting['reason']): Waiting => {
  const title = titleOf(facts, subject);
  return { repo: facts.repo.fullName, stage, subject, ...(title !== undefined ? { title } : {}), reason };
};

/** A candidate, with the title the pass read for its subject. */
const titled = (facts: RepoFacts, c: Candidate): Candidate => {
  const title = titleOf(facts, c.subject);
  return title !== undefined ? { ...c, title } : c;
};

export type LanderDecision =
  { launch: true; requestId: number | null } | { launch: false; why: Waiting['reason'] | null };

/**
 * SP09: no cap term. A claim PR (TR04) at a head with no recorded verdict, nothing in flight; or a land request for a claim PR.
 * A claim that would otherwise get a lander says why it does not (in flight, attempts at this head used up).
 */
export function shouldSpawnLander(facts: RepoFacts, claim: ClaimView, attemptsPerHead: number): LanderDecision {
  const n = claim.pull.number;
  if (!isLandable(facts, claim)) return { launch: false, why: null };
  const wanted = wantsLander(facts, claim, attemptsPerHead);
  if (!wanted.launch) return wanted;
  // Wanted, but its subject is live: its own lander is that work, running; another kind holds it back.
  if (live(facts, pullSubject(n))) {
    return {
      launch: false,
      why: heldBack(facts, pullSubject(n), 'lander')
        ? makeRefusal('in_flight', { repo: facts.repo.fullName, subject: pullSubject(n) })
        : null,
    };
  }
  return wanted;
}

/** Whether a landable claim wants a lander, leaving liveness aside. */
function wantsLander(facts: RepoFacts, claim: ClaimView, attemptsPerHead: number): LanderDecision {
  const n = claim.pull.number;
  const request = facts.requests.find((r) => r.kind === 'land' && r.number === n);
  if (!request && !facts.config.autoland.enabled) return { launch: false, why: null };
  // LD01: a lander judges the head on the base it will land on; where that base is, GitHub must say first.
  const base = baseTipOf(facts, claim.pull);
  if (!base)
    return {
      launch: false,
      why: makeRefusal('base_unread', { repo: facts.repo.fullName, number: n, branch: baseRefOf(facts, claim.pull) }),
    };
  if (request) return { launch: true, requestId: request.id };
  // LD06: a reject of a head accepted before is validated once more before a fix is spent on it.
  const rerun = rejectToRerun(facts.runs, claim.pull);
  // An accept counts on its base only; a reject stands for the head until it changes (LD02).
  if (!rerun && (verdictNow(facts.runs, claim.pull, base) || rejectedHead(facts.runs, claim.pull)))
    return { launch: false, why: null };
  // Landers of this head on this base that ended without a verdict.
  const atHead = facts.runs.filter(
    (r) =>
      r.kind === 'lander' &&
      r.prNumber === n &&
      r.headSha === claim.pull.headSha &&
      r.baseSha === base &&
      r.verdict === null,
  );
  if (atHead.length < attemptsPerHead) return { launch: true, requestId: null };
  return {
    launch: false,
    why: makeRefusal('lander_attempts_used_up', {
      repo: facts.repo.fullName,
      number: n,
      sha: claim.pull.headSha,
      attempts: atHead.length,
    }),
  };
}

export function decideLanders(facts: RepoFacts, attemptsPerHead: number): Decided {
  const out: Candidate[] = [];
  const passed: Waiting[] = [];
  for (const claim of facts.view.claims) {
    const decision = shouldSpawnLander(facts, claim, attemptsPerHead);
    if (!decision.launch) {
      if (decision.why) passed.push(waiting(facts, 'lander', pullSubject(claim.pull.number), decision.why));
      continue;
    }
    const { requestId } = decision;
    out.push({
      stage: 'lander',
      repo: facts.repo.fullName,
      installationId: facts.repo.installationId,
      kind: 'lander',
      subject: pullSubject(claim.pull.number),
      issueNumber: claimedIssue(facts, claim),
      prNumber: claim.pull.number,
      headSha: claim.pull.headSha,
      baseSha: baseTipOf(facts, claim.pull),
      budgetMinutes: facts.config.budget_minutes.lander,
      requestId,
      why: requestId
        ? 'land requested'
        : rejectToRerun(facts.runs, claim.pull)
          ? 'a reject of a head accepted before: validated once more before a fix (LD06)'
          : 'claim PR has no verdict at its head',
    });
  }
  return { candidates: out.map((c) => titled(facts, c)), waiting: passed };
}

export type FixDecision = 'launch' | 'no' | 'in_flight' | 'exhausted' | 'spent';

/** SP19: the head was rejected (on any base: LD02) with fix-forward on, and the reject stands (LD06). */
const rejectedAtHead = (facts: RepoFacts, claim: ClaimView): boolean =>
  facts.config.fix_forward.enabled && rejectedHead(facts.runs, claim.pull) && !rejectToRerun(facts.runs, claim.pull);

/**
 * SP09/SP19/TR33: a reject at the current head with fix-forward on, or a writer's open ask; attempts left,
 * nothing in flight. A fix only writers asked for also waits on the day's spend, as new work does.
 */
export function shouldSpawnFix(facts: RepoFacts, claim: ClaimView): FixDecision {
  if (!isLandable(facts, claim)) return 'no';
  const n = claim.pull.number;
  const rejected = rejectedAtHead(facts, claim);
  const asks = fixAsksOf(facts, claim);
  if (!rejected && !asks.length) return 'no';
  // Live first: a fix still running counts among the attempts, but has not used its attempt up yet.
  // Asks that arrive meanwhile wait for the next fix, which carries them all.
  if (live(facts, pullSubject(n))) return heldBack(facts, pullSubject(n), 'fix') ? 'in_flight' : 'no';
  const fixes = facts.runs.filter((r) => r.kind === 'fix' && r.prNumber === n);
  // A fix launched since the snapshot (in this very pass) is running, not used up.
  if (fixes.some((r) => r.status === 'live')) return 'no';
  if (!asks.length && fixes.some((r) => r.headSha === claim.pull.headSha && r.outcome === 'success')) return 'no';
  if (fixes.length >= facts.config.fix_forward.max_attempts) return 'exhausted';
  if (!rejected && spendStop(facts)) return 'spent';
  return 'launch';
}

export function decideFixes(facts: RepoFacts): Decided {
  const out: Decided = { candidates: [], waiting: [] };
  for (const claim of facts.view.claims) {
    const n = claim.pull.number;
    const subject = pullSubject(n);
    const decision = shouldSpawnFix(facts, claim);
    const asks = fixAsksOf(facts, claim);
    if (decision === 'in_flight')
      out.waiting.push(
        waiting(facts, 'fix', subject, makeRefusal('in_flight', { repo: facts.repo.fullName, subject })),
      );
    if (decision === 'spent') out.waiting.push(waiting(facts, 'fix', subject, spendStop(facts)!));
    if (decision === 'exhausted') {
      const attempts = facts.runs.filter((r) => r.kind === 'fix' && r.prNumber === n).length;
      out.waiting.push(
        waiting(
          facts,
          'fix',
          subject,
          asks.length && !rejectedAtHead(facts, claim)
            ? makeRefusal('fix_asks_exhausted', { number: n, attempts, by: askedBy(asks) })
            : makeRefusal('fix_attempts_exhausted', { number: n, attempts }),
        ),
      );
    }
    if (decision !== 'launch') continue;
    // TR24: a fix works from the claim's issue too; an edit nobody confirmed holds it, as it holds new work.
    const issue = facts.view.issues.find((i) => i.number === claimedIssue(facts, claim));
    if (issue && issueEditedSinceLabel(facts, issue)) {
      out.waiting.push(
        waiting(
          facts,
          'fix',
          subject,
          makeRefusal('issue_edited_since_label', {
            repo: facts.repo.fullName,
            number: issue.number,
            label: facts.config.afk_label,
          }),
        ),
      );
      continue;
    }
    out.candidates.push(
      titled(facts, {
        stage: 'fix',
        repo: facts.repo.fullName,
        installationId: facts.repo.installationId,
        kind: 'fix',
        subject,
        issueNumber: claimedIssue(facts, claim),
        prNumber: n,
        headSha: claim.pull.headSha,
        budgetMinutes: facts.config.budget_minutes.fix,
        requestId: null,
        why: fixWhy(rejectedAtHead(facts, claim), asks),
        ...(asks.length ? { asks: askKeys(asks) } : {}),
      }),
    );
  }
  return out;
}

/** An open PR already claims the issue (closing keyword on a claim PR, or a trailer naming one of its runs). */
export function isIssueClaimed(facts: RepoFacts, issue: number): boolean {
  const runIds = new Set(facts.runs.filter((r) => r.issueNumber === issue && isAfkKind(r.kind)).map((r) => r.id));
  return facts.view.pulls.some((p) => p.closes.includes(issue) || (p.yokeRun !== null && runIds.has(p.yokeRun)));
}

/** Why new AFK work in this repository waits today, if the day's spend reached a limit (the repository's or the fleet's). */
export function spendStop(facts: RepoFacts): Waiting['reason'] | null {
  const usd = (n: number) => n.toFixed(2);
  const repoLimit = facts.config.budget?.daily_usd;
  if (repoLimit !== undefined && facts.spentToday.repo >= repoLimit) {
    return makeRefusal('budget_spent', {
      repo: facts.repo.fullName,
      scope: 'it',
      spent: usd(facts.spentToday.repo),
      limit: usd(repoLimit),
    });
  }
  if (facts.fleetDailyUsd !== null && facts.spentToday.fleet >= facts.fleetDailyUsd) {
    return makeRefusal('budget_spent', {
      repo: facts.repo.fullName,
      scope: 'the fleet',
      spent: usd(facts.spentToday.fleet),
      limit: usd(facts.fleetDailyUsd),
    });
  }
  return null;
}

/**
 * SP09: no cap term. Opted in, auto loop on, not paused, labelled work waiting, nothing in flight.
 * 'no' is work the loop does not want; a reason is work it wants that waits.
 */
export function shouldLaunchAuto(facts: RepoFacts, issue: IssueView): true | 'no' | Waiting['reason'] {
  if (!autoLoopOn(facts.state, facts.config)) return 'no';
  if (!issue.labels.includes(facts.config.afk_label)) return 'no';
  if (isIssueClaimed(facts, issue.number)) return 'no';
  const afkRuns = facts.runs.filter((r) => r.issueNumber === issue.number && isAfkKind(r.kind));
  // A run that succeeded should have opened a claim PR; if that PR was closed
  // unmerged, a person decides what next (`/yoke start`), not the loop.
  if (afkRuns.at(-1)?.outcome === 'success' && !live(facts, issueSubject(issue.number))) return 'no';
  // Its own AFK run is live: that is the work, running.
  if (live(facts, issueSubject(issue.number))) return 'no';
  // TR24: a body edited since the label was seen is not worked unseen; a writer's /yoke start confirms it.
  if (issueEditedSinceLabel(facts, issue))
    return makeRefusal('issue_edited_since_label', {
      repo: facts.repo.fullName,
      number: issue.number,
      label: facts.config.afk_label,
    });
  return newWorkStop(facts) ?? true;
}

/** What holds back all new work of a repository: a pause, or the day's spend. */
const newWorkStop = (facts: RepoFacts): Waiting['reason'] | null =>
  isPaused(facts.state)
    ? makeRefusal('repo_paused', { repo: facts.repo.fullName, threshold: facts.pauseThreshold })
    : spendStop(facts);

export function decideNewWork(facts: RepoFacts): Decided {
  const out: Candidate[] = [];
  const passed: Waiting[] = [];
  const make = (issue: number, kind: 'afk_manual' | 'afk_auto', requestId: number | null, why: string): Candidate => {
    // TR33: a writer's `/yoke start <instructions>` goes to the run that starts the issue.
    const asks = openStartAsks(facts.asks, issue);
    return {
      ...(asks.length ? { asks: askKeys(asks) } : {}),
      stage: 'new_work',
      repo: facts.repo.fullName,
      installationId: facts.repo.installationId,
      kind,
      subject: issueSubject(issue),
      issueNumber: issue,
      prNumber: null,
      headSha: null,
      budgetMinutes: facts.config.budget_minutes.afk,
      requestId,
      why,
    };
  };
  const open = new Set([...facts.view.issues.map((i) => i.number), ...facts.startableIssues]);
  const taken = new Set<number>();
  const stop = newWorkStop(facts);
  for (const req of facts.requests) {
    if (req.kind !== 'start' || !open.has(req.number) || taken.has(req.number)) continue;
    taken.add(req.number);
    const subject = issueSubject(req.number);
    if (live(facts, subject))
      passed.push(
        waiting(facts, 'new_work', subject, makeRefusal('in_flight', { repo: facts.repo.fullName, subject })),
      );
    else if (stop) passed.push(waiting(facts, 'new_work', subject, stop));
    else
      out.push(
        make(
          req.number,
          'afk_manual',
          req.id,
          req.requestedBy === 'api' ? 'started with an operator token' : `started by @${req.requestedBy}`,
        ),
      );
  }
  for (const issue of [...facts.view.issues].sort((a, b) => a.number - b.number)) {
    if (taken.has(issue.number)) continue;
    const decision = shouldLaunchAuto(facts, issue);
    if (decision === true) out.push(make(issue.number, 'afk_auto', null, `labelled ${facts.config.afk_label}`));
    else if (decision !== 'no') passed.push(waiting(facts, 'new_work', issueSubject(issue.number), decision));
  }
  return { candidates: out.map((c) => titled(facts, c)), waiting: passed };
}

async function collectCandidates(
  ctx: ProducerContext,
  wants: (repo: RepoRef) => Promise<boolean>,
  decide: (facts: RepoFacts) => Decided,
): Promise<Decided> {
  const out: Decided = { candidates: [], waiting: [] };
  for (const repo of ctx.repos) {
    if (isAtCap(ctx.snapshot, ctx.policy, repo.fullName)) continue;
    if (!(await wants(repo))) continue;
    const facts = await ctx.facts(repo);
    if (!facts) continue;
    const decided = decide(facts);
    out.candidates.push(...decided.candidates);
    out.waiting.push(...decided.waiting);
  }
  return out;
}

/** SP12: a repository at its cap in the snapshot is not read at all; all of its work waits for a slot. */
export function atCapRepos(ctx: Pick<ProducerContext, 'repos' | 'snapshot' | 'policy'>): Waiting[] {
  return ctx.repos
    .filter((repo) => isAtCap(ctx.snapshot, ctx.policy, repo.fullName))
    .map((repo) => ({
      repo: repo.fullName,
      stage: 'lander' as const,
      subject: null,
      reason: makeRefusal('at_cap', {
        repo: repo.fullName,
        live: ctx.snapshot.liveCount,
        cap: effectiveCap(ctx.policy, repo.fullName),
      }),
    }));
}

export const landerCandidates = (ctx: ProducerContext): Promise<Decided> =>
  collectCandidates(ctx, ctx.wantsLanders, (f) => decideLanders(f, ctx.policy.landerAttemptsPerHead));

export const fixCandidates = (ctx: ProducerContext): Promise<Decided> =>
  collectCandidates(ctx, ctx.wantsFixes, decideFixes);

export const newWorkCandidates = (ctx: ProducerContext): Promise<Decided> =>
  collectCandidates(ctx, async () => true, decideNewWork);
