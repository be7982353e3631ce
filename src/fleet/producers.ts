import { isAtCap, type CapPolicy, type LivenessSnapshot } from './cap.js';
import { issueSubject, pullSubject, subjectKey, type Candidate } from './candidate.js';
import { readClaim } from './claims.js';
import type { RepoFacts } from './repo-facts.js';
import { isLandable, verdictAtHead } from './verdicts.js';
import { autoLoopOn, isPaused } from './repo-state.js';
import type { ClaimView, IssueView, RepoRef } from '../forge/types.js';
import { isAfkKind } from '../store/runs.js';

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
  wantsFixes(repo: RepoRef): Promise<boolean>;
}

/** The issue a claim PR delivers, as its claim records it. */
const claimedIssue = (facts: RepoFacts, claim: ClaimView): number | null => {
  const reading = readClaim(facts, claim.pull);
  return reading.claimed ? reading.issueNumber : null;
};

const live = (facts: RepoFacts, subject: string): boolean => facts.liveSubjects.has(subjectKey(facts.repo.fullName, subject));

/** SP09: no cap term. A claim PR (TR04) at a head with no recorded verdict, nothing in flight; or a land request for a claim PR. */
export function shouldSpawnLander(facts: RepoFacts, claim: ClaimView, attemptsPerHead: number): { launch: boolean; requestId: number | null } {
  const n = claim.pull.number;
  if (live(facts, pullSubject(n)) || !isLandable(facts, claim)) return { launch: false, requestId: null };
  const request = facts.requests.find((r) => r.kind === 'land' && r.number === n);
  if (request) return { launch: true, requestId: request.id };
  if (!facts.config.autoland.enabled) return { launch: false, requestId: null };
  if (verdictAtHead(facts.runs, claim.pull)) return { launch: false, requestId: null };
  const atHead = facts.runs.filter((r) => r.kind === 'lander' && r.prNumber === n && r.headSha === claim.pull.headSha);
  return { launch: atHead.length < attemptsPerHead, requestId: null };
}

export function decideLanders(facts: RepoFacts, attemptsPerHead: number): Candidate[] {
  const out: Candidate[] = [];
  for (const claim of facts.view.claims) {
    const { launch, requestId } = shouldSpawnLander(facts, claim, attemptsPerHead);
    if (!launch) continue;
    out.push({
      stage: 'lander',
      repo: facts.repo.fullName,
      installationId: facts.repo.installationId,
      kind: 'lander',
      subject: pullSubject(claim.pull.number),
      issueNumber: claimedIssue(facts, claim),
      prNumber: claim.pull.number,
      headSha: claim.pull.headSha,
      budgetMinutes: facts.config.budget_minutes.lander,
      requestId,
      why: requestId ? 'land requested' : 'claim PR has no verdict at its head',
    });
  }
  return out;
}

export type FixDecision = 'launch' | 'no' | 'exhausted';

/** SP09/SP19: a reject at the current head, fix-forward on, attempts left, nothing in flight. */
export function shouldSpawnFix(facts: RepoFacts, claim: ClaimView): FixDecision {
  if (!facts.config.fix_forward.enabled || !isLandable(facts, claim)) return 'no';
  const n = claim.pull.number;
  if (verdictAtHead(facts.runs, claim.pull)?.verdict !== 'reject') return 'no';
  if (live(facts, pullSubject(n))) return 'no';
  const fixes = facts.runs.filter((r) => r.kind === 'fix' && r.prNumber === n);
  if (fixes.some((r) => r.headSha === claim.pull.headSha && r.outcome === 'success')) return 'no';
  return fixes.length >= facts.config.fix_forward.max_attempts ? 'exhausted' : 'launch';
}

export function decideFixes(facts: RepoFacts): Candidate[] {
  return facts.view.claims
    .filter((claim) => shouldSpawnFix(facts, claim) === 'launch')
    .map((claim) => ({
      stage: 'fix' as const,
      repo: facts.repo.fullName,
      installationId: facts.repo.installationId,
      kind: 'fix' as const,
      subject: pullSubject(claim.pull.number),
      issueNumber: claimedIssue(facts, claim),
      prNumber: claim.pull.number,
      headSha: claim.pull.headSha,
      budgetMinutes: facts.config.budget_minutes.fix,
      requestId: null,
      why: 'lander rejected the claim PR at its head',
    }));
}

/** An open PR already claims the issue (closing keyword on a claim PR, or a trailer naming one of its runs). */
export function isIssueClaimed(facts: RepoFacts, issue: number): boolean {
  const runIds = new Set(facts.runs.filter((r) => r.issueNumber === issue && isAfkKind(r.kind)).map((r) => r.id));
  return facts.view.pulls.some((p) => p.closes.includes(issue) || (p.yokeRun !== null && runIds.has(p.yokeRun)));
}

/** SP09: no cap term. Opted in, auto loop on, not paused, labelled work waiting, nothing in flight. */
export function shouldLaunchAuto(facts: RepoFacts, issue: IssueView): boolean {
  if (!autoLoopOn(facts.state, facts.config) || isPaused(facts.state)) return false;
  if (!issue.labels.includes(facts.config.afk_label)) return false;
  if (live(facts, issueSubject(issue.number))) return false;
  if (isIssueClaimed(facts, issue.number)) return false;
  const afkRuns = facts.runs.filter((r) => r.issueNumber === issue.number && isAfkKind(r.kind));
  // A run that succeeded should have opened a claim PR; if that PR was closed
  // unmerged, a person decides what next (`/yoke start`), not the loop.
  return afkRuns.at(-1)?.outcome !== 'success';
}

export function decideNewWork(facts: RepoFacts): Candidate[] {
  const out: Candidate[] = [];
  const make = (issue: number, kind: 'afk_manual' | 'afk_auto', requestId: number | null, why: string): Candidate => ({
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
  });
  const open = new Set([...facts.view.issues.map((i) => i.number), ...facts.startableIssues]);
  const taken = new Set<number>();
  if (!isPaused(facts.state)) {
    for (const req of facts.requests) {
      if (req.kind !== 'start' || !open.has(req.number) || taken.has(req.number)) continue;
      if (live(facts, issueSubject(req.number))) continue;
      taken.add(req.number);
      out.push(make(req.number, 'afk_manual', req.id, `started by @${req.requestedBy}`));
    }
  }
  for (const issue of [...facts.view.issues].sort((a, b) => a.number - b.number)) {
    if (taken.has(issue.number) || !shouldLaunchAuto(facts, issue)) continue;
    out.push(make(issue.number, 'afk_auto', null, `labelled ${facts.config.afk_label}`));
  }
  return out;
}

async function collectCandidates(
  ctx: ProducerContext,
  wants: (repo: RepoRef) => Promise<boolean>,
  decide: (facts: RepoFacts) => Candidate[],
): Promise<Candidate[]> {
  const out: Candidate[] = [];
  for (const repo of ctx.repos) {
    if (isAtCap(ctx.snapshot, ctx.policy, repo.fullName)) continue;
    if (!(await wants(repo))) continue;
    const facts = await ctx.facts(repo);
    if (facts) out.push(...decide(facts));
  }
  return out;
}

export const landerCandidates = (ctx: ProducerContext): Promise<Candidate[]> =>
  collectCandidates(ctx, ctx.wantsLanders, (f) => decideLanders(f, ctx.policy.landerAttemptsPerHead));

export const fixCandidates = (ctx: ProducerContext): Promise<Candidate[]> => collectCandidates(ctx, ctx.wantsFixes, decideFixes);

export const newWorkCandidates = (ctx: ProducerContext): Promise<Candidate[]> => collectCandidates(ctx, async () => true, decideNewWork);

