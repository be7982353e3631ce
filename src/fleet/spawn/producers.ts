import { issueEditedSinceLabel, startApproved } from './approval.js';
import { makeRefusal } from '../../kernel/codes/table.js';
import { effectiveCap, isAtCap, type CapPolicy, type LivenessSnapshot } from '../cap.js';
import type { Candidate, Decided, Waiting } from '../candidate.js';
import { issueSubject, pullSubject } from '../../kernel/ids.js';
import { landingRecord, type RepoFacts } from '../repo-facts.js';
import { isLandable, rejectedHead, rejectToRerun } from './verdicts.js';
import { claimedIssue, heldBack, live, titled, waiting } from './producer-parts.js';
import { decideLanders } from './landers.js';
import { autoLoopOn, isPaused } from '../repo-state.js';
import type { ClaimView, IssueView, RepoRef } from '../../forge/types.js';
import { isAfkKind } from '../../store/fleet/runs.js';
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

export type FixDecision = 'launch' | 'no' | 'in_flight' | 'exhausted';

/** SP19: the head was rejected (on any base: LD02) with fix-forward on, and the reject stands (LD06). */
const rejectedAtHead = (facts: RepoFacts, claim: ClaimView): boolean =>
  facts.config.fix_forward.enabled &&
  rejectedHead(landingRecord(facts), claim.pull) &&
  !rejectToRerun(landingRecord(facts), claim.pull);

/**
 * SP09/SP19/TR33: a reject at the current head with fix-forward on, or a writer's open ask; attempts left,
 * nothing in flight. Money is the pass's to spend (BU01), as slots are: no decision here waits for it.
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
  return newWorkStop(facts) ?? graphStop(facts, issue.number) ?? true;
}

/** BU05: why GitHub's issue graph holds an issue back: open issues block it, or it has open sub-issues. */
export function graphStop(facts: RepoFacts, issue: number): Waiting['reason'] | null {
  const g = facts.issueGraph?.get(issue);
  if (!g) return null;
  const repo = facts.repo.fullName;
  // A blocked issue GitHub would not name the blockers of still waits: its summary says open issues block it.
  if (g.blockers === null || g.blockers.length)
    return makeRefusal('issue_blocked', {
      repo,
      number: issue,
      blockers: g.blockers?.length ? g.blockers.join(', ') : 'issues GitHub did not name',
    });
  if (g.openSubIssues)
    return makeRefusal('issue_has_sub_issues', {
      repo,
      number: issue,
      open: g.openSubIssues,
      label: facts.config.afk_label,
    });
  return null;
}

/** What holds back all new work of a repository: a pause (money is the pass's to spend, BU01). */
const newWorkStop = (facts: RepoFacts): Waiting['reason'] | null =>
  isPaused(facts.state)
    ? makeRefusal('repo_paused', { repo: facts.repo.fullName, threshold: facts.pauseThreshold })
    : null;

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
  const open = new Set([...facts.view.issues.map((i) => i.number), ...facts.startableIssues.keys()]);
  const taken = new Set<number>();
  const stop = newWorkStop(facts);
  for (const req of facts.requests) {
    if (req.kind !== 'start' || !open.has(req.number) || taken.has(req.number)) continue;
    taken.add(req.number);
    const subject = issueSubject(req.number);
    // TR24: a start launches only on the text a writer approved (their `/yoke start` recorded it).
    const edited = startApproved(facts, req.number)
      ? null
      : makeRefusal('issue_edited_since_label', {
          repo: facts.repo.fullName,
          number: req.number,
          label: facts.config.afk_label,
        });
    const held = stop ?? edited ?? graphStop(facts, req.number);
    if (live(facts, subject))
      passed.push(
        waiting(facts, 'new_work', subject, makeRefusal('in_flight', { repo: facts.repo.fullName, subject })),
      );
    else if (held) passed.push(waiting(facts, 'new_work', subject, held));
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

/**
 * SC10: whether any producer could find work in a repository, or anything that waits: an open claim PR (landers,
 * fixes), an open request (a start or a land), or an open issue with the AFK label (new work). A repository with
 * none has no candidate and nothing waiting whatever else its facts say, so the producers pass it by: an idle
 * fleet's pass decides over the repositories with work, not over every one.
 */
export function mayDecide(facts: RepoFacts): boolean {
  return (
    facts.view.claims.length > 0 ||
    facts.requests.length > 0 ||
    facts.view.issues.some((i) => i.labels.includes(facts.config.afk_label))
  );
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
